#include "forward/cpu_share.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

namespace hh::forward {
namespace {

std::chrono::nanoseconds thread_cpu_time() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

}  // namespace

std::optional<IdleCores::Ticks> IdleCores::read(std::istream& proc_stat) {
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

double IdleCores::now() {
  const auto at = std::chrono::steady_clock::now();
  if (at - sampled_at_ < kWindow) return idle_cores_;
  std::ifstream stat("/proc/stat");
  const auto ticks = read(stat);
  if (!ticks) return idle_cores_ = 0;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (sampled_at_ != std::chrono::steady_clock::time_point{} && ticks->all > all_ticks_ && cpus > 0) {
    idle_cores_ = static_cast<double>(ticks->idle - idle_ticks_) / static_cast<double>(ticks->all - all_ticks_) *
                  static_cast<double>(cpus);
  }
  sampled_at_ = at;
  idle_ticks_ = ticks->idle;
  all_ticks_ = ticks->all;
  return idle_cores_;
}

std::chrono::milliseconds CpuShare::sleep_bound(std::chrono::milliseconds shortest_deadline) {
  return std::clamp<std::chrono::milliseconds>(shortest_deadline / 4, CpuShare{}.slice, CpuShare{}.longest_sleep);
}

void run_within_share(boost::asio::io_context& io, const CpuShare& cpu) {
  if (!cpu.limited || cpu.share >= 1.0) {
    io.run();
    return;
  }
  // How much longer the slices so far should have taken: what they used, spread at
  // `share`, less what they took. A handler longer than a slice (a catch-up step) is paid
  // for over the next sleeps, each at most longest_sleep.
  std::chrono::nanoseconds owed{0};
  while (!io.stopped()) {
    const auto used_before = thread_cpu_time();
    const auto started = std::chrono::steady_clock::now();
    io.run_for(cpu.slice);
    if (io.stopped()) break;
    if (!cpu.limited()) {
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
    std::this_thread::sleep_for(pause);
    owed -= pause;
  }
}

}  // namespace hh::forward
