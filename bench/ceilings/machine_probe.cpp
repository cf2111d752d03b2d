// machine_probe: two facts about this machine that bound a durable ack and that the no-op
// HTTP ceiling does not contain, printed as key=value lines for bench/run.
//
//   machine_probe FOLDER
//
// - How long waking a thread takes when its core has been idle. An ack of `serve` is
//   handed between threads four times (io thread → inbox writer → WAL sync → io thread,
//   and loadgen waits on the socket); the no-op server has no hand-over
//   (docs/decisions/023-1kib-ack-goal.md).
//   Measured across two cores (pinned, when there are two): thread A waits IDLE µs, then
//   notifies thread B, blocked on a condition variable; B notes when it runs. The median
//   of 300, after 1,000 µs of idleness and after 20 µs.
// - How long one fdatasync of a small write takes in FOLDER (the file system bench/run's
//   databases live on): a durable ack waits for at least one. 16 KiB writes at growing
//   offsets of a preallocated file, each synced, 200 of them 1 ms apart (the file is
//   removed afterwards).
//
// No network; about 1.5 s in all.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Micros = std::chrono::duration<double, std::micro>;

// The value below which `percent` % of `values` fall (0 for none).
double percentile(std::vector<double> values, size_t percent) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() * percent / 100];
}

// Best effort: on one core (or if refused) the threads stay where the scheduler puts them.
void pin_to(unsigned core) {
  if (std::thread::hardware_concurrency() < 2) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Wake-up latencies (µs) of a thread on core 1 notified from core 0 after `idle` of quiet.
std::vector<double> wake_ups(std::chrono::microseconds idle, int count) {
  std::mutex mutex;
  std::condition_variable woken;
  bool signalled = false;   // GUARDED_BY(mutex)
  int handled = 0;          // GUARDED_BY(mutex)
  Clock::time_point sent;   // GUARDED_BY(mutex)
  std::vector<double> latencies;
  latencies.reserve(static_cast<size_t>(count));
  std::thread waiter([&] {
    pin_to(1);
    std::unique_lock lock(mutex);
    for (int i = 0; i < count; ++i) {
      woken.wait(lock, [&] { return signalled; });
      latencies.push_back(Micros(Clock::now() - sent).count());
      signalled = false;
      ++handled;
      woken.notify_all();  // lets the notifier go on
    }
  });
  pin_to(0);
  for (int i = 0; i < count; ++i) {
    std::this_thread::sleep_for(idle);
    {
      std::lock_guard lock(mutex);
      signalled = true;
      sent = Clock::now();
    }
    woken.notify_all();
    std::unique_lock lock(mutex);
    woken.wait(lock, [&] { return handled == i + 1; });
  }
  waiter.join();
  return latencies;
}

// fdatasync latencies (ms) of `count` 16 KiB writes in a new file in `folder`; empty and
// a message on stderr when the file cannot be written.
std::vector<double> small_syncs(const std::string& folder, int count) {
  constexpr size_t kWrite = 16 * 1024;
  constexpr off_t kFileBytes = 4 * 1024 * 1024;
  const std::string path = folder + "/machine_probe.tmp";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::fprintf(stderr, "machine_probe: open %s: %s\n", path.c_str(), std::strerror(errno));
    return {};
  }
  std::vector<double> latencies;
  // Preallocated and synced first: the writes then overwrite, as SQLite's rewound WAL does.
  std::vector<char> block(kWrite, 'x');
  bool ok = true;
  for (off_t at = 0; ok && at < kFileBytes; at += static_cast<off_t>(kWrite)) {
    ok = ::pwrite(fd, block.data(), kWrite, at) == static_cast<ssize_t>(kWrite);
  }
  ok = ok && ::fsync(fd) == 0;
  for (int i = 0; ok && i < count; ++i) {
    const off_t at = static_cast<off_t>(i * kWrite) % kFileBytes;
    ok = ::pwrite(fd, block.data(), kWrite, at) == static_cast<ssize_t>(kWrite);
    const auto started = Clock::now();
    ok = ok && ::fdatasync(fd) == 0;
    latencies.push_back(Micros(Clock::now() - started).count() / 1000.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!ok) std::fprintf(stderr, "machine_probe: writing %s: %s\n", path.c_str(), std::strerror(errno));
  ::close(fd);
  ::unlink(path.c_str());
  return ok ? latencies : std::vector<double>{};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: machine_probe FOLDER\n");
    return 2;
  }
  // Sleeps as asked: the default timer slack (50 µs) would stretch the 20 µs pause.
  (void)::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const auto idle = wake_ups(std::chrono::microseconds(1000), 300);
  const auto busy = wake_ups(std::chrono::microseconds(20), 300);
  std::printf("wakeup_idle_us=%.1f\nwakeup_busy_us=%.1f\n", percentile(idle, 50), percentile(busy, 50));
  const auto syncs = small_syncs(argv[1], 200);
  if (syncs.empty()) return 1;
  std::printf("fdatasync_16k_ms=%.2f\nfdatasync_16k_p90_ms=%.2f\n", percentile(syncs, 50), percentile(syncs, 90));
  return 0;
}
