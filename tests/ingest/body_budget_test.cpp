// The in-flight body budget (receiver/http/body_budget.h): what fits is taken at once,
// what does not waits for a give-back or its deadline, first come first woken.
#include <boost/test/unit_test.hpp>

#include "receiver/http/body_budget.h"

BOOST_AUTO_TEST_SUITE(body_budget_test)

using namespace hh::http;
using namespace std::chrono_literals;

namespace {

// Runs `coroutine` on `io` until it finishes; returns its result.
template <typename T>
T run(net::io_context& io, net::awaitable<T> coroutine) {
  std::optional<T> result;
  net::co_spawn(io, std::move(coroutine), [&](std::exception_ptr e, T value) {
    if (e) std::rethrow_exception(e);
    result = value;
  });
  io.restart();
  io.run();
  return *result;
}

}  // namespace

BOOST_AUTO_TEST_CASE(takes_what_fits_and_refuses_what_never_can) {
  BodyBudget budget(100);
  BOOST_TEST(budget.try_take(60));
  BOOST_TEST(!budget.try_take(41));
  BOOST_TEST(budget.try_take(40));
  BOOST_TEST(budget.in_use() == 100u);
  budget.give_back(100);
  net::io_context io;
  BOOST_TEST(!run(io, budget.take(101, 10s)));  // more than the whole budget: at once, no wait
  BOOST_TEST(budget.in_use() == 0u);
}

BOOST_AUTO_TEST_CASE(a_waiter_gets_room_when_it_is_given_back) {
  BodyBudget budget(100);
  BOOST_REQUIRE(budget.try_take(80));
  net::io_context io;
  net::steady_timer later(io, 50ms);
  later.async_wait([&](auto) { budget.give_back(80); });
  BOOST_TEST(run(io, budget.take(50, 10s)));
  BOOST_TEST(budget.in_use() == 50u);
}

BOOST_AUTO_TEST_CASE(a_waiter_gives_up_at_its_deadline) {
  BodyBudget budget(100);
  BOOST_REQUIRE(budget.try_take(80));
  net::io_context io;
  BOOST_TEST(!run(io, budget.take(50, 50ms)));
  BOOST_TEST(budget.in_use() == 80u);
  budget.give_back(80);
  BOOST_TEST(budget.try_take(100));  // the gone waiter holds nothing
}

BOOST_AUTO_TEST_CASE(a_reservation_gives_everything_back) {
  BodyBudget budget(100);
  net::io_context io;
  {
    BodyReservation held(&budget);
    BOOST_TEST(run(io, held.grow_to(30, 0ms)));
    BOOST_TEST(run(io, held.grow_to(70, 0ms)));
    BOOST_TEST(run(io, held.grow_to(20, 0ms)));  // never shrinks while held
    BOOST_TEST(held.held() == 70u);
    BOOST_TEST(!run(io, held.grow_to(101, 0ms)));
    BOOST_TEST(budget.in_use() == 70u);
  }
  BOOST_TEST(budget.in_use() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()  // body_budget_test
