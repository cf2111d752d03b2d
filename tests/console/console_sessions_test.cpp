// The console's sessions (console/console_sessions.h) and the overview's reading of the
// metrics exposition (console/overview_history.h), as units with a hand-driven clock.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "console/console_sessions.h"
#include "console/overview_history.h"

BOOST_AUTO_TEST_SUITE(console_sessions_test)

using hh::console::Role;
using hh::console::Sessions;

namespace {

struct Clock {
  int64_t now = 1'700'000'000'000;
  Sessions::Clock fn() {
    return [this] { return now; };
  }
};

constexpr std::string_view kRead = "read-token-0123456789";
constexpr std::string_view kAdmin = "admin-token-0123456789";

}  // namespace

BOOST_AUTO_TEST_CASE(tokens_sign_in_as_their_role) {
  Clock clock;
  Sessions sessions(kRead, kAdmin, {}, clock.fn());
  BOOST_TEST((sessions.role_of_token(kRead) == Role::read));
  BOOST_TEST((sessions.role_of_token(kAdmin) == Role::admin));
  BOOST_TEST(!sessions.role_of_token("read-token-012345678"));
  BOOST_TEST(!sessions.role_of_token(""));
  Sessions no_admin(kRead, "", {}, clock.fn());
  BOOST_TEST(!no_admin.role_of_token(""));
  BOOST_TEST((no_admin.role_of_token(kRead) == Role::read));
}

// A reload's tokens (app/reload.h): the replaced ones sign in no more, and the sessions of
// a role whose token changed end; the other role's go on.
BOOST_AUTO_TEST_CASE(replacing_a_token_ends_the_sessions_it_signed_in) {
  Clock clock;
  Sessions sessions(kRead, kAdmin, {}, clock.fn());
  const auto read = sessions.sign_in(kRead).session.value();
  const auto admin = sessions.sign_in(kAdmin).session.value();
  BOOST_TEST(!sessions.sign_in("wrong-token-0123456789").role);

  const auto unchanged = sessions.replace_tokens(kRead, kAdmin);
  BOOST_TEST(!unchanged.read_changed);
  BOOST_TEST(!unchanged.admin_changed);
  BOOST_TEST(unchanged.sessions_ended == 0u);

  constexpr std::string_view kNewAdmin = "admin-token-new-0123456789";
  const auto rotated = sessions.replace_tokens(kRead, kNewAdmin);
  BOOST_TEST(rotated.admin_changed);
  BOOST_TEST(!rotated.read_changed);
  BOOST_TEST(rotated.sessions_ended == 1u);
  BOOST_TEST(!sessions.find(admin.id));
  BOOST_TEST(sessions.find(read.id).has_value());
  BOOST_TEST(!sessions.role_of_token(kAdmin));
  BOOST_TEST((sessions.sign_in(kNewAdmin).role == Role::admin));

  // Withdrawn (no admin token now): nothing signs in as admin, not even an empty token.
  const auto withdrawn = sessions.replace_tokens("read-token-new-0123456789", "");
  BOOST_TEST(withdrawn.read_changed);
  BOOST_TEST(withdrawn.admin_changed);
  BOOST_TEST(withdrawn.sessions_ended == 2u);  // the read session, the new admin's
  BOOST_TEST(sessions.size() == 0u);
  BOOST_TEST(!sessions.sign_in(kNewAdmin).role);
  BOOST_TEST(!sessions.sign_in(kRead).role);
  BOOST_TEST(!sessions.sign_in("").role);
}

BOOST_AUTO_TEST_CASE(a_session_is_found_by_its_id_only) {
  Clock clock;
  Sessions sessions(kRead, kAdmin, {}, clock.fn());
  const auto created = sessions.create(Role::admin).value();
  BOOST_TEST(created.id.size() == 43u);
  BOOST_TEST(created.view.csrf_token.size() == 43u);
  BOOST_TEST(created.view.csrf_token != created.id);
  auto found = sessions.find(created.id);
  BOOST_REQUIRE(found);
  BOOST_TEST((found->role == Role::admin));
  BOOST_TEST(found->csrf_token == created.view.csrf_token);
  std::string other = created.id;
  other[0] = other[0] == 'A' ? 'B' : 'A';
  BOOST_TEST(!sessions.find(other));
  BOOST_TEST(!sessions.find(""));
  BOOST_TEST(!sessions.find(created.id + "x"));
  const auto second = sessions.create(Role::read).value();
  BOOST_TEST(second.id != created.id);
  BOOST_TEST(second.view.csrf_token != created.view.csrf_token);
}

BOOST_AUTO_TEST_CASE(sessions_end_at_their_lifetime_when_idle_and_at_sign_out) {
  Clock clock;
  Sessions sessions(kRead, kAdmin, {.lifetime = std::chrono::hours(8), .idle = std::chrono::hours(1)}, clock.fn());
  const auto busy = sessions.create(Role::read).value();
  const auto idle = sessions.create(Role::read).value();
  const auto leaving = sessions.create(Role::admin).value();
  sessions.remove(leaving.id);
  BOOST_TEST(!sessions.find(leaving.id));
  // Used every 50 minutes: alive for 7.5 hours, gone once 8 hours have passed.
  for (int i = 0; i < 9; ++i) {
    clock.now += 50 * 60 * 1000;
    BOOST_TEST(sessions.find(busy.id).has_value());
  }
  BOOST_TEST(!sessions.find(idle.id));  // not used for more than an hour
  clock.now += 50 * 60 * 1000;
  BOOST_TEST(!sessions.find(busy.id));
}

BOOST_AUTO_TEST_CASE(the_table_is_bounded) {
  Clock clock;
  Sessions sessions(kRead, kAdmin, {}, clock.fn());
  std::string first;
  for (size_t i = 0; i < hh::console::kMaxSessions + 10; ++i) {
    auto created = sessions.create(Role::read);
    BOOST_REQUIRE(created);
    if (i == 0) first = created->id;
    clock.now += 1;
  }
  BOOST_TEST(sessions.size() == hh::console::kMaxSessions);
  BOOST_TEST(!sessions.find(first));  // the one that would expire first made room
}

// Read-only sign-ins past the bound replace read-only sessions, never an admin's (a holder
// of the read token signed every admin out by signing in 1,100 times); an admin's sign-in
// may replace either.
BOOST_AUTO_TEST_CASE(read_only_sign_ins_past_the_bound_keep_the_admins_sessions) {
  Clock clock;
  Sessions sessions(kRead, kAdmin, {}, clock.fn());
  const auto admin = sessions.create(Role::admin).value();  // expires first of all
  clock.now += 1;
  for (size_t i = 0; i < hh::console::kMaxSessions + 100; ++i) {
    BOOST_REQUIRE(sessions.create(Role::read));
    clock.now += 1;
  }
  BOOST_TEST(sessions.size() == hh::console::kMaxSessions);
  BOOST_TEST(sessions.find(admin.id).has_value());
  const auto second_admin = sessions.create(Role::admin).value();
  BOOST_TEST(sessions.find(second_admin.id).has_value());
  BOOST_TEST(sessions.find(admin.id).has_value());  // a read-only one made room
}

// With every session an admin's, a read-only sign-in is refused and ends none of them (it
// ended the admin's that would expire first); an admin's sign-in still replaces that one.
BOOST_AUTO_TEST_CASE(a_read_only_sign_in_is_refused_when_every_session_is_an_admins) {
  Clock clock;
  Sessions sessions(kRead, kAdmin, {}, clock.fn());
  std::vector<std::string> admins;
  for (size_t i = 0; i < hh::console::kMaxSessions; ++i) {
    admins.push_back(sessions.create(Role::admin).value().id);
    clock.now += 1;
  }
  for (int attempt = 0; attempt < 3; ++attempt) BOOST_TEST(!sessions.create(Role::read).has_value());
  BOOST_TEST(sessions.size() == hh::console::kMaxSessions);
  size_t alive = 0;
  for (const std::string& id : admins) alive += sessions.find(id).has_value() ? 1 : 0;
  BOOST_TEST(alive == hh::console::kMaxSessions);
  // One signs out: the read-only sign-in takes its place.
  sessions.remove(admins.back());
  BOOST_TEST(sessions.create(Role::read).has_value());
  // An admin's sign-in still makes room (it may replace any session).
  BOOST_TEST(sessions.create(Role::admin).has_value());
  BOOST_TEST(sessions.size() == hh::console::kMaxSessions);
}

BOOST_AUTO_TEST_CASE(cookie_values_are_read_from_the_header) {
  using hh::console::cookie_value;
  BOOST_TEST((cookie_value("a=1; hh_console=xyz; b=2", "hh_console") == std::optional<std::string_view>("xyz")));
  BOOST_TEST((cookie_value("hh_console=xyz", "hh_console") == std::optional<std::string_view>("xyz")));
  BOOST_TEST(!cookie_value("xhh_console=1; hh_consolex=2", "hh_console"));
  BOOST_TEST(!cookie_value("", "hh_console"));
  BOOST_TEST(hh::console::tokens_equal("abc", "abc"));
  BOOST_TEST(!hh::console::tokens_equal("abc", "abd"));
  BOOST_TEST(!hh::console::tokens_equal("", "abd"));
}

BOOST_AUTO_TEST_CASE(the_overview_keeps_its_families_from_the_exposition) {
  const std::string text =
      "# HELP healthhook_deliveries_total x\n"
      "# TYPE healthhook_deliveries_total counter\n"
      "healthhook_deliveries_total{outcome=\"stored\"} 12\n"
      "healthhook_deliveries_total{outcome=\"duplicate\"} 0\n"
      "healthhook_deliveries_totalx 5\n"
      "healthhook_forward_outbox_pending{destination=\"a b\"} 3\n"
      "healthhook_database_bytes 4096\n"
      "healthhook_inbox_commit_seconds_bucket{le=\"0.1\"} 7\n";
  const auto samples = hh::console::parse_exposition(text, hh::console::kOverviewFamilies);
  BOOST_REQUIRE(samples.size() == 4u);
  BOOST_TEST(samples[0].series == "healthhook_deliveries_total{outcome=\"stored\"}");
  BOOST_TEST(samples[0].value == 12);
  BOOST_TEST(samples[2].series == "healthhook_forward_outbox_pending{destination=\"a b\"}");
  BOOST_TEST(samples[2].value == 3);
  BOOST_TEST(samples[3].value == 4096);
}

BOOST_AUTO_TEST_SUITE_END()
