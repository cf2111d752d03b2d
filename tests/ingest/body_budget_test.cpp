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
    BodyReservation held(&budget, 0ms);
    BOOST_TEST(run(io, held.grow_to(30)));
    BOOST_TEST(run(io, held.grow_to(70)));
    BOOST_TEST(run(io, held.grow_to(20)));  // never shrinks while held
    BOOST_TEST(held.held() == 70u);
    BOOST_TEST(!run(io, held.grow_to(101)));
    BOOST_TEST(budget.in_use() == 70u);
  }
  BOOST_TEST(budget.in_use() == 0u);
}

// A chunked body grows its reservation read by read, and each read that found the budget
// full waited a whole budget_wait: a body of three reads waited three seconds before its
// 503. One request's waits now share one budget_wait. Here the first wait is answered after
// about 400 of its 600 ms; the second finds at most 200 ms left, so the room given back 400
// ms into it comes too late (it came in time for a wait of its own 600 ms).
BOOST_AUTO_TEST_CASE(one_requests_waits_share_one_wait) {
  BodyBudget budget(100);
  BOOST_REQUIRE(budget.try_take(100));  // other requests hold it all
  net::io_context io;
  BodyReservation held(&budget, 600ms);
  net::steady_timer first_room(io, 400ms);
  first_room.async_wait([&](auto) { budget.give_back(10); });
  BOOST_TEST(run(io, held.grow_to(10)));
  net::steady_timer second_room(io, 400ms);
  second_room.async_wait([&](auto) { budget.give_back(10); });
  BOOST_TEST(!run(io, held.grow_to(20)));
  BOOST_TEST(held.held() == 10u);
  // Room there at once costs no wait, even with none left.
  BOOST_TEST(run(io, held.grow_to(20)));
}

BOOST_AUTO_TEST_SUITE_END()  // body_budget_test
