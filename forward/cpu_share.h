#pragma once
// The forwarder's thread while ingest is busy (spec §10: forwarding never slows ingest).
//
// On the 2-core machines we measure on, any CPU used beside `serve`'s ingest threads slows
// the acks, whatever its nice value: a CPU loop at nice 19 cost 16-24 % of them, the sender
// draining a backlog at batch 1 about 22 % (docs/decisions/059-forwarding-yields-the-cpu-to-ingest.md).
// So while `limited()` holds (deliveries are being stored and the machine has no core to
// spare: IdleCores), the thread runs its io_context
// in short slices and sleeps off what it used above `share` of one core; the outbox keeps
// what waits meanwhile, and the thread runs at full speed again once ingest is quiet.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>

namespace hh::forward {

struct CpuShare {
  double share = 1.0;            // of one core, while limited() holds
  std::function<bool()> limited;  // asked after each slice; none: never limited
  // One slice of the io_context's work, and the longest sleep after one (what a longer
  // handler used is slept off over several): a POST's answer waits through a sleep, so it
  // must stay well below the shortest POST deadline (sleep_bound()).
  std::chrono::milliseconds slice{5};
  std::chrono::milliseconds longest_sleep{100};

  // A quarter of the shortest deadline, between a slice and 100 ms.
  static std::chrono::milliseconds sleep_bound(std::chrono::milliseconds shortest_deadline);
};

// Runs `io` until it runs out of work or is stopped, like io.run().
void run_within_share(boost::asio::io_context& io, const CpuShare& cpu);

// How many of the machine's cores were idle (idle or waiting for I/O, /proc/stat) over the
// last window of at least kWindow: on a machine with a core to spare, forwarding slows
// nothing and is not limited. Without /proc/stat, none.
class IdleCores {
 public:
  static constexpr std::chrono::milliseconds kWindow{100};
  double now();

  // The first line of /proc/stat ("cpu  user nice system idle iowait irq softirq steal …",
  // clock ticks of all CPUs): idle + iowait, and all eight; none when it is not one.
  struct Ticks {
    uint64_t idle = 0;
    uint64_t all = 0;
  };
  static std::optional<Ticks> read(std::istream& proc_stat);

 private:
  std::chrono::steady_clock::time_point sampled_at_{};
  uint64_t idle_ticks_ = 0;
  uint64_t all_ticks_ = 0;
  double idle_cores_ = 0;
};

}  // namespace hh::forward
