#pragma once
// The forwarder's thread while ingest is busy (spec §10: forwarding never slows ingest).
//
// On the 2-core machines we measure on, any CPU used beside `serve`'s ingest threads slows
// the acks, whatever its nice value: a CPU loop at nice 19 cost 16-24 % of them, the sender
// draining a backlog at batch 1 about 22 % (docs/decisions/059-forwarding-yields-the-cpu-to-ingest.md).
// So while `limited()` holds (deliveries are being stored and the machine has no core to
// spare: SpareCores), the thread runs its io_context in short slices and sleeps off what it
// used above `share` of one core; the outbox keeps what waits meanwhile, and the thread runs
// at full speed again once ingest is quiet. The time it sleeps is counted (`slept_ns`): a POST's
// deadline does not count it (destination_sender.cpp), so a backend that answered in time
// is not taken for a slow or unreachable one.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>

namespace hh::forward {

struct CpuShare {
  double share = 1.0;            // of one core, while limited() holds; 1 (or ≤ 0): never limited
  std::function<bool()> limited;  // asked after each slice; none: never limited
  // One slice of the io_context's work while limited, and the longest sleep after one
  // (what a longer handler used is slept off over several); unlimited, how often limited()
  // is asked.
  std::chrono::milliseconds slice{5};
  std::chrono::milliseconds longest_sleep{100};
  std::chrono::milliseconds unlimited_slice{100};
  std::atomic<int64_t>* slept_ns = nullptr;  // adds each sleep (read by deadlines and /metrics)
};

// CPU time the calling thread has used.
std::chrono::nanoseconds thread_cpu_time();

// Runs `io` until it runs out of work or is stopped, like io.run().
void run_within_share(boost::asio::io_context& io, const CpuShare& cpu);

// Arms `timer` to call `expired()` once `timeout` has passed, not counting what the thread
// slept meanwhile (`slept_ns`, as CpuShare counts it; none: plain time): an answer that
// arrived during a sleep is read, not taken for a late one. `waiting()` is asked first at
// each expiry: false ends it (the wait is over, and the timer may be gone).
void arm_awake_deadline(boost::asio::steady_timer& timer, std::chrono::nanoseconds timeout,
                        const std::atomic<int64_t>* slept_ns, std::function<bool()> waiting,
                        std::function<void()> expired);

// How many cores the rest of the machine left idle over the last window of at least
// kWindow, counting what the calling thread itself used as idle (it would not run without
// it). With /proc/stat readable and no CPU quota: the machine's idle and iowait time. Where
// /proc/stat cannot be read (the shipped unit's ProcSubset=pid) or a cgroup v2 quota
// (cpu.max: a container's --cpus, systemd's CPUQuota) bounds this process, the host's idle
// cores say nothing about it: then the cores it may use (affinity, the quota) less what its
// other threads used (getrusage).
class SpareCores {
 public:
  static constexpr std::chrono::milliseconds kWindow{100};
  SpareCores();  // reads the quota and whether /proc/stat can be read, once
  double now();

  // The first line of /proc/stat ("cpu  user nice system idle iowait irq softirq steal …",
  // clock ticks of all CPUs): idle + iowait, and all eight; none when it is not one.
  struct Ticks {
    uint64_t idle = 0;
    uint64_t all = 0;
  };
  static std::optional<Ticks> read(std::istream& proc_stat);
  // A cgroup v2 cpu.max ("200000 100000": quota and period, µs) in cores; none for "max …".
  static std::optional<double> quota_cores(std::istream& cpu_max);

 private:
  bool whole_machine_ = false;  // /proc/stat readable and no quota
  double usable_cores_ = 1;     // affinity and quota
  double online_cores_ = 1;     // of the machine, which /proc/stat counts
  std::chrono::steady_clock::time_point sampled_at_{};
  std::chrono::nanoseconds own_cpu_{0};
  std::chrono::nanoseconds process_cpu_{0};
  Ticks ticks_;
  double spare_ = 0;
};

}  // namespace hh::forward
