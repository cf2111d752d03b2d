#include "forward/cpu_share.h"

#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <string>
#include <thread>

namespace hh::forward {
std::chrono::nanoseconds thread_cpu_time() {
  timespec t{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return {};
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

namespace {

double online_cores() { return static_cast<double>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))); }

double usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return online_cores();
}

// User and system time of every thread of this process (no /proc needed).
std::chrono::nanoseconds this_process_cpu_time() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return {};
  const auto time = [](const timeval& t) { return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec); };
  return time(usage.ru_utime) + time(usage.ru_stime);
}

}  // namespace

std::optional<SpareCores::Ticks> SpareCores::read(std::istream& proc_stat) {
  std::string label;
  uint64_t field[8] = {};
  if (!(proc_stat >> label) || label != "cpu") return std::nullopt;
  for (uint64_t& f : field) proc_stat >> f;
  if (!proc_stat) return std::nullopt;
  Ticks ticks;
  for (const uint64_t f : field) ticks.all += f;
  ticks.idle = field[3] + field[4];
  return ticks;
}

std::optional<double> SpareCores::quota_cores(std::istream& cpu_max) {
  std::string quota;
  double period = 0;
  if (!(cpu_max >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  try {
    const double cores = std::stod(quota) / period;
    if (cores > 0) return cores;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

SpareCores::SpareCores() : usable_cores_(usable_cores()), online_cores_(online_cores()) {
  // This process's cgroup (v2: the "0::" line) and its quota, where there is one.
  std::ifstream cgroups("/proc/self/cgroup");
  bool quota = false;
  for (std::string line; std::getline(cgroups, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    std::ifstream cpu_max("/sys/fs/cgroup" + line.substr(3) + "/cpu.max");
    if (const auto cores = quota_cores(cpu_max)) {
      usable_cores_ = std::min(usable_cores_, *cores);
      quota = true;
    }
  }
  std::ifstream stat("/proc/stat");
  whole_machine_ = !quota && read(stat).has_value();
}

double SpareCores::now() {
  const auto at = std::chrono::steady_clock::now();
  if (at - sampled_at_ < kWindow) return spare_;
  const auto own_cpu = thread_cpu_time();
  const auto process_cpu = whole_machine_ ? std::chrono::nanoseconds{0} : this_process_cpu_time();
  std::optional<Ticks> ticks;
  if (whole_machine_) {
    std::ifstream stat("/proc/stat");
    ticks = read(stat);
  }
  if (sampled_at_ != std::chrono::steady_clock::time_point{}) {
    const std::chrono::duration<double> window = at - sampled_at_;
    const double own = std::chrono::duration<double>(own_cpu - own_cpu_) / window;
    if (!whole_machine_) {
      const double others = std::chrono::duration<double>(process_cpu - process_cpu_) / window - own;
      spare_ = usable_cores_ - others;
    } else if (ticks && ticks->all > ticks_.all && ticks->idle >= ticks_.idle) {
      const double idle = static_cast<double>(ticks->idle - ticks_.idle) /
                          static_cast<double>(ticks->all - ticks_.all) * online_cores_;
      spare_ = idle + own;
    }
  }
  sampled_at_ = at;
  own_cpu_ = own_cpu;
  process_cpu_ = process_cpu;
  if (ticks) ticks_ = *ticks;
  return spare_;
}

namespace {

int64_t load(const std::atomic<int64_t>* slept_ns) {
  return slept_ns ? slept_ns->load(std::memory_order_relaxed) : 0;
}

struct AwakeDeadline {
  boost::asio::steady_timer* timer;
  const std::atomic<int64_t>* slept_ns;
  int64_t slept_counted;  // ns, as of the timer's last start
  std::function<bool()> waiting;
  std::function<void()> expired;

  void operator()(const boost::system::error_code& ec) {
    if (ec || !waiting()) return;
    if (const int64_t slept = load(slept_ns); slept > slept_counted) {
      timer->expires_after(std::chrono::nanoseconds(slept - slept_counted));
      slept_counted = slept;
      timer->async_wait(std::move(*this));
      return;
    }
    expired();
  }
};

}  // namespace

void arm_awake_deadline(boost::asio::steady_timer& timer, std::chrono::nanoseconds timeout,
                        const std::atomic<int64_t>* slept_ns, std::function<bool()> waiting,
                        std::function<void()> expired) {
  timer.expires_after(timeout);
  timer.async_wait(AwakeDeadline{&timer, slept_ns, load(slept_ns), std::move(waiting), std::move(expired)});
}

void run_within_share(boost::asio::io_context& io, const CpuShare& cpu) {
  if (!cpu.limited || cpu.share >= 1.0 || cpu.share <= 0.0) {
    io.run();
    return;
  }
  // How much longer the slices so far should have taken: what they used, spread at
  // `share`, less what they took. A handler longer than a slice (a catch-up step) is paid
  // for over the next sleeps, each at most longest_sleep.
  std::chrono::nanoseconds owed{0};
  bool limited = cpu.limited();
  while (!io.stopped()) {
    const auto used_before = thread_cpu_time();
    const auto started = std::chrono::steady_clock::now();
    io.run_for(limited ? cpu.slice : cpu.unlimited_slice);
    if (io.stopped()) break;
    limited = cpu.limited();
    if (!limited) {
      owed = {};
      continue;
    }
    const auto used = thread_cpu_time() - used_before;
    owed += std::chrono::duration_cast<std::chrono::nanoseconds>(used / cpu.share) -
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started);
    if (owed <= std::chrono::nanoseconds::zero()) {
      owed = {};  // an idle slice is no credit for a later burst
      continue;
    }
    const auto pause = std::min<std::chrono::nanoseconds>(owed, cpu.longest_sleep);
    const auto slept_from = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(pause);
    owed -= pause;
    if (cpu.slept_ns) {
      cpu.slept_ns->fetch_add(std::chrono::nanoseconds(std::chrono::steady_clock::now() - slept_from).count(),
                              std::memory_order_relaxed);
    }
  }
}

}  // namespace hh::forward
