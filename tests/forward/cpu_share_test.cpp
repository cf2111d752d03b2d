// The forwarder's thread while ingest is busy (forward/cpu_share.h): every handler still
// runs and the loop ends with the work, limited or not; while limited, it sleeps off what
// it used above its share (a lower bound on the time taken, which load can only raise);
// the machine's idle cores are read from /proc/stat.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/test/unit_test.hpp>
#include <unistd.h>

#include <atomic>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "forward/cpu_share.h"

BOOST_AUTO_TEST_SUITE(cpu_share_test)

using namespace hh;

namespace {

// Busy for `cpu` of this thread's CPU time.
void burn(std::chrono::nanoseconds cpu) {
  const auto until = forward::thread_cpu_time() + cpu;
  while (forward::thread_cpu_time() < until) {
  }
}

struct Run {
  int64_t slept_ns = 0;
  int handlers_run = 0;
  int limited_asked = 0;
  std::chrono::nanoseconds cpu{0};
  std::chrono::steady_clock::duration took{0};
};

// `handlers` handlers of `each` CPU, run within `share` while limited is `limited`.
Run run(int handlers, std::chrono::nanoseconds each, double share, bool limited) {
  boost::asio::io_context io;
  Run out;
  for (int i = 0; i < handlers; ++i) {
    boost::asio::post(io, [&] {
      burn(each);
      ++out.handlers_run;
    });
  }
  forward::CpuShare cpu;
  cpu.share = share;
  cpu.limited = [&] {
    ++out.limited_asked;
    return limited;
  };
  std::atomic<int64_t> slept_ns{0};
  cpu.slept_ns = &slept_ns;
  const auto started = std::chrono::steady_clock::now();
  const auto cpu_before = forward::thread_cpu_time();
  forward::run_within_share(io, cpu);
  out.cpu = forward::thread_cpu_time() - cpu_before;
  out.took = std::chrono::steady_clock::now() - started;
  out.slept_ns = slept_ns.load();
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(while_limited_every_handler_runs_and_the_cpu_above_the_share_is_slept_off) {
  const Run r = run(100, std::chrono::microseconds(500), 0.25, true);
  BOOST_TEST(r.handlers_run == 100);
  BOOST_TEST(r.limited_asked > 0);
  // 50 ms of CPU at a quarter of a core: about 200 ms. What the last slice owes is not
  // slept (the work is over), hence the margin.
  const auto expected = std::chrono::duration_cast<std::chrono::milliseconds>(r.cpu / 0.25);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(r.took);
  BOOST_TEST(took.count() >= expected.count() * 8 / 10, "took " << took.count() << " ms, expected about "
                                                                  << expected.count() << " ms");
  // Counted (healthhook_forward_yielded_seconds_total, and POST deadlines leave it out).
  BOOST_TEST(r.slept_ns > 0);
}

BOOST_AUTO_TEST_CASE(unlimited_it_runs_like_io_run) {
  const Run r = run(100, std::chrono::microseconds(100), 0.25, false);
  BOOST_TEST(r.handlers_run == 100);
  BOOST_TEST(r.limited_asked > 0);
  BOOST_TEST(r.slept_ns == 0);
  boost::asio::io_context io;  // no limit given at all: io.run() itself
  int ran = 0;
  boost::asio::post(io, [&] { ++ran; });
  forward::run_within_share(io, forward::CpuShare{});
  BOOST_TEST(ran == 1);
}

// A POST's deadline does not count what the thread slept yielding the CPU: the answer that
// came during the sleep is read. Here the "sleep" is counted by hand before the deadline's
// first expiry, and the answer's timer expires after the deadline's first expiry (expired
// timers run in the order of their expiry): without the sleep taken off, the deadline wins.
BOOST_AUTO_TEST_CASE(a_deadline_does_not_count_what_the_thread_slept) {
  for (const bool slept_meanwhile : {true, false}) {
    boost::asio::io_context io;
    std::atomic<int64_t> slept_ns{0};
    boost::asio::steady_timer deadline(io);
    boost::asio::steady_timer answer(io);
    bool waiting = true;
    bool expired = false;
    bool answered = false;
    forward::arm_awake_deadline(deadline, std::chrono::milliseconds(20), &slept_ns, [&] { return waiting; },
                                [&] { expired = true; });
    answer.expires_after(std::chrono::milliseconds(40));
    answer.async_wait([&](const boost::system::error_code&) {
      if (expired) return;
      answered = true;
      waiting = false;
      deadline.cancel();
    });
    boost::asio::post(io, [&] {
      if (slept_meanwhile) slept_ns += std::chrono::nanoseconds(std::chrono::milliseconds(200)).count();
    });
    io.run();
    BOOST_TEST(answered == slept_meanwhile);
    BOOST_TEST(expired == !slept_meanwhile);
  }
}

BOOST_AUTO_TEST_CASE(spare_cores_are_read_from_proc_stat) {
  std::istringstream line("cpu  3566190 1399831 1559211 4285157 84828 0 112733 3083 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n");
  const auto ticks = forward::SpareCores::read(line);
  BOOST_REQUIRE(ticks);
  BOOST_TEST(ticks->idle == 4285157u + 84828u);
  BOOST_TEST(ticks->all == 3566190u + 1399831u + 1559211u + 4285157u + 84828u + 0u + 112733u + 3083u);
  std::istringstream other("intr 1 2 3\n");
  BOOST_TEST(!forward::SpareCores::read(other));
  // A cgroup v2 quota (cpu.max): quota and period in µs, or "max".
  for (const auto& [text, cores] : std::vector<std::pair<std::string, double>>{
           {"200000 100000\n", 2.0}, {"50000 100000\n", 0.5}, {"max 100000\n", -1}, {"nonsense\n", -1},
           {"100000 0\n", -1}}) {
    std::istringstream cpu_max(text);
    const auto quota = forward::SpareCores::quota_cores(cpu_max);
    BOOST_TEST(quota.value_or(-1) == cores, text);
  }
  // This machine's: two samples a window apart give between none and every core (this
  // thread's own CPU counts as spare: it burns, then samples).
  forward::SpareCores spare;
  (void)spare.now();
  burn(forward::SpareCores::kWindow + std::chrono::milliseconds(20));
  const double cores = spare.now();
  BOOST_TEST(cores >= 0.0);
  // Clock ticks of 10 ms against a window of ~120 ms: a margin.
  BOOST_TEST(cores <= static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN)) * 1.25 + 0.5);
}

BOOST_AUTO_TEST_SUITE_END()
