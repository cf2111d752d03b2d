// The processor over a real inbox: arrival order, poisoned deliveries, store failures,
// restarts, the processing lock, reset_derived, yielding and parsing ahead, steps on a
// thread of their own. What both
// backends promise runs on both (data-driven over kBothBackends, tests/support/
// backend_store.h: a store opened as `serve` opens it, checked with neutral SQL); what
// only SQLite has is in the suite sqlite_only at the end, which says why.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <thread>

#include "processor/parse_pipeline.h"
#include "processor/processing_thread.h"
#include "processor/processor.h"
#include "store/schema/tables.h"
#include "tests/derived/corpus.h"
#include "tests/derived/sqlite_processor.h"
#include "tests/derived/store_dump.h"
#include "tests/support/backend_store.h"
#include "tests/support/open_files.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(processor_test)

using namespace hh;
using test::BackendStore;
using Strings = std::vector<std::string>;
namespace data = boost::unit_test::data;

namespace {

void catch_up(processor::Processor& p) {
  auto done = p.run_until_caught_up(nullptr);
  BOOST_REQUIRE_MESSAGE(done, done.error());
}

Strings outcomes(BackendStore& s) { return s.rows("SELECT seq, status, family, error FROM deliveries ORDER BY seq", 4); }

// The store rejects a summary of id `id` as it rejects a row that breaks a constraint
// (ErrorKind::data: the delivery itself cannot be applied), through a test trigger.
void reject_summaries_with_id(BackendStore& s, const std::string& id) {
  if (s.backend() == test::Backend::sqlite) {
    s.exec("CREATE TRIGGER reject BEFORE INSERT ON summaries WHEN NEW.id = '" + id +
           "' BEGIN SELECT RAISE(ABORT, 'rejected by a test trigger'); END");
  } else {
    s.exec("CREATE FUNCTION reject_summary() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
           "RAISE EXCEPTION 'rejected by a test trigger' USING ERRCODE = 'check_violation'; END $$; "
           "CREATE TRIGGER reject BEFORE INSERT ON summaries FOR EACH ROW WHEN (NEW.id = '" + id +
           "') EXECUTE FUNCTION reject_summary()");
  }
}

// The error a delivery rejected by that trigger is marked with: the table, then the
// engine's message (PostgreSQL's names the statement and where the trigger raised it).
std::string rejection(const BackendStore& s) {
  return s.backend() == test::Backend::sqlite
             ? "summaries: rejected by a test trigger"
             : "summaries: hh_derived_summaries: ERROR:  rejected by a test trigger "
               "CONTEXT:  PL/pgSQL function reject_summary() line 1 at RAISE";
}

// Sleep summaries m<first>…m<last>: each a summary of its own, or with `summaries` > 0,
// delivery i a version of summary "sleep-<i mod summaries>" (later ones replace it).
std::vector<store::NewDelivery> sleep_deliveries(int first, int last, int summaries = 0) {
  std::vector<store::NewDelivery> deliveries;
  for (int i = first; i <= last; ++i) {
    const int summary = summaries > 0 ? i % summaries : i;
    deliveries.push_back(test::sleep_delivery("m" + std::to_string(i), "sleep-" + std::to_string(summary), i));
  }
  return deliveries;
}

// What `rebuild` must reproduce: every derived table, the applied position and each
// delivery's outcome, in an order both engines give alike.
std::map<std::string, Strings> processed_state(BackendStore& s) {
  std::map<std::string, Strings> state;
  for (std::string_view table : store::schema::derived_tables()) {
    Strings rows = s.rows("SELECT * FROM " + std::string(table));
    std::sort(rows.begin(), rows.end());
    state[std::string(table)] = std::move(rows);
  }
  state["processor_state"] = s.rows("SELECT * FROM processor_state");
  state["deliveries"] = outcomes(s);
  return state;
}

}  // namespace

BOOST_DATA_TEST_CASE(whatever_order_four_versions_arrive_in_the_last_to_arrive_wins, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  const std::array<int, 4> scores{10, 20, 30, 40};
  std::array<size_t, 4> order{0, 1, 2, 3};
  int permutations = 0;
  do {
    const std::string id = "sleep-" + std::to_string(permutations);
    std::vector<store::NewDelivery> arrivals;
    for (size_t i : order) {
      arrivals.push_back(test::sleep_delivery(id + "-msg-" + std::to_string(i), id, scores[i]));
    }
    s.append(arrivals);
    catch_up(*s.processor());
    // The highest seq is the last arrival: order[3].
    const std::string last_seq = s.value("SELECT max(seq) FROM inbox");
    const Strings stored = s.rows("SELECT seq, data FROM summaries WHERE id = '" + id + "'", 2);
    BOOST_REQUIRE_EQUAL(stored.size(), 1u);
    BOOST_TEST(stored[0].starts_with(last_seq + "|"), stored[0]);
    BOOST_TEST(stored[0].find("\"score\":" + std::to_string(scores[order[3]])) != std::string::npos, stored[0]);
    BOOST_TEST(s.rows("SELECT op FROM changes WHERE table_name = 'summaries' AND row_key LIKE '%/" + id +
                          "' ORDER BY change_id",
                      1) == (Strings{"insert", "update", "update", "update"}),
               boost::test_tools::per_element());
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  BOOST_TEST(permutations == 24);
  // The user appears once, with the first delivery applied; the others change nothing of it.
  BOOST_TEST(s.rows("SELECT seq, op FROM changes WHERE table_name = 'users'", 2) == (Strings{"1|insert"}),
             boost::test_tools::per_element());
}

BOOST_DATA_TEST_CASE(an_invalid_delivery_is_marked_and_the_next_one_is_processed, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  s.append({test::sleep_delivery("a", "sleep-1", 1), test::raw_delivery("b", "{not json"),
            test::raw_delivery("c", R"({"data":{}})"), test::sleep_delivery("d", "sleep-2", 2),
            test::raw_delivery("e", R"({"event_type":"daily.timeseries.hypnogram.created","data":{}})"),
            test::raw_delivery("f", R"({"event_type":"something.new","data":{}})")});
  auto p = s.processor();
  BOOST_TEST(!p->run_once(6));  // one step takes all six
  BOOST_TEST(outcomes(s) ==
                 (Strings{"1|processed|summary|NULL",
                          "2|invalid|other|body: not valid JSON (JSON document ended early in the middle of an object "
                          "or array.)",
                          "3|invalid|other|event_type: missing", "4|processed|summary|NULL", "5|ignored|hypnogram|NULL",
                          "6|unknown|other|NULL"}),
             boost::test_tools::per_element());
  BOOST_TEST(s.rows("SELECT id FROM summaries ORDER BY id COLLATE \"C\"", 1) == (Strings{"sleep-1", "sleep-2"}),
             boost::test_tools::per_element());
  BOOST_TEST(p->stats().processed == 2u);
  BOOST_TEST(p->stats().invalid == 2u);
  BOOST_TEST(p->stats().ignored == 1u);
  BOOST_TEST(p->stats().unknown == 1u);
  BOOST_TEST(p->applied_seq() == 6);
}

// Parsed inline (the default for a short backlog) and on the parse thread (whose failed
// step is retried inline): either way the retry stops at the seq the writer says is on
// disk too, and row 4, after it, stays pending.
BOOST_DATA_TEST_CASE(a_delivery_the_store_rejects_is_marked_invalid_without_its_rows,
                     data::make(test::kBothBackends) * data::make({false, true}), backend, parse_ahead) {
  BackendStore s(backend);
  reject_summaries_with_id(s, "poison");
  s.append({test::heartrate_delivery("a", 1717200000000, 3, 60), test::sleep_delivery("b", "poison", 1),
            test::sleep_delivery("c", "sleep-2", 2), test::sleep_delivery("d", "sleep-3", 3)});
  processor::ProcessorOptions options;
  if (parse_ahead) options.parse_ahead_min_backlog = 1;
  auto p = s.processor(options);
  BOOST_TEST(!p->run_once(3));
  BOOST_TEST(outcomes(s) == (Strings{"1|processed|timeseries|NULL", "2|invalid|summary|" + rejection(s),
                                     "3|processed|summary|NULL", "4|pending|NULL|NULL"}),
             boost::test_tools::per_element());
  BOOST_TEST(s.value("SELECT count(*) FROM samples") == "3");
  BOOST_TEST(s.rows("SELECT id FROM summaries", 1) == Strings{"sleep-2"}, boost::test_tools::per_element());
  BOOST_TEST(s.rows("SELECT seq, table_name FROM changes ORDER BY change_id", 2) ==
                 (Strings{"1|users", "1|samples", "3|summaries"}),
             boost::test_tools::per_element());
}

BOOST_DATA_TEST_CASE(a_step_yields_to_waiting_deliveries_after_its_first_few, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  auto p = s.processor();
  s.append(sleep_deliveries(1, 10));
  bool waiting = true;
  int asked = 0;
  p->yield_to([&] {
    ++asked;
    return waiting;
  });
  const auto first = static_cast<int64_t>(processor::Processor::kDeliveriesBeforeYield);
  BOOST_TEST(p->run_once(10));  // deliveries wait: the step ends early and says "more"
  BOOST_TEST(p->applied_seq() == first);
  BOOST_TEST(s.value("SELECT count(*) FROM summaries") == std::to_string(first));
  BOOST_TEST(p->run_once(10));  // still waiting: the next step applies as many again
  BOOST_TEST(p->applied_seq() == 2 * first);
  waiting = false;
  BOOST_TEST(!p->run_once(10));  // nothing waits: the rest in one step
  BOOST_TEST(p->applied_seq() == 10);
  BOOST_TEST(asked > 0);
  BOOST_TEST(s.value("SELECT count(*) FROM delivery_outcomes WHERE status = 'processed'") == "10");
}

BOOST_DATA_TEST_CASE(a_step_far_behind_yields_only_after_a_short_steps_work, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  auto p = s.processor();
  s.append(sleep_deliveries(1, 20));
  p->yield_to([] { return true; }, /*max_backlog=*/12);  // deliveries always wait
  // 20 behind: far behind, so no yield before kBehindStep's 2,000 deliveries (or 10,000
  // rows): the whole backlog in one step.
  BOOST_TEST(!p->run_once(20));
  BOOST_TEST(p->applied_seq() == 20);
  s.append(sleep_deliveries(21, 25));
  BOOST_TEST(p->run_once(25));  // 5 behind: yields again after its first few
  BOOST_TEST(p->applied_seq() == 20 + static_cast<int64_t>(processor::Processor::kDeliveriesBeforeYield));
}

// Parsing ahead on a thread for any backlog (a threshold of one delivery, no quiet time),
// so the steps below switch between the thread and inline parsing as the inbox grows.
BOOST_DATA_TEST_CASE(live_steps_apply_rows_parsed_ahead_as_the_inbox_grows, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  auto p = s.processor(processor::ProcessorOptions{.max_rows_per_step = 10000,
                                                   .max_deliveries_per_step = 2,
                                                   .parse_ahead_min_backlog = 1,
                                                   .parse_ahead_after_quiet = std::chrono::milliseconds(0)});
  s.append({test::sleep_delivery("a", "sleep-1", 10), test::sleep_delivery("b", "sleep-2", 20),
            test::sleep_delivery("c", "sleep-3", 30)});
  BOOST_TEST(p->run_once(3));  // two deliveries per step: more is waiting
  BOOST_TEST(p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 2);
  BOOST_TEST(!p->run_once(3));
  BOOST_TEST(p->applied_seq() == 3);
  // Told of rows that are not there yet: applies what there is, waits for nothing.
  BOOST_TEST(!p->run_once(5));
  BOOST_TEST(p->applied_seq() == 3);
  BOOST_TEST(!p->parsing_ahead());  // caught up: the thread is stopped
  // Then they arrive: none is skipped, the later version wins.
  s.append({test::sleep_delivery("d", "sleep-1", 40), test::sleep_delivery("e", "sleep-4", 50)});
  BOOST_TEST(p->run_once(5));  // at the step's limit of two
  BOOST_TEST(p->applied_seq() == 5);
  BOOST_TEST(!p->run_once(5));
  BOOST_TEST(s.rows("SELECT status FROM deliveries ORDER BY seq", 1) ==
                 (Strings{"processed", "processed", "processed", "processed", "processed"}),
             boost::test_tools::per_element());
  BOOST_TEST(s.rows("SELECT id, seq FROM summaries ORDER BY id COLLATE \"C\"", 2) ==
                 (Strings{"sleep-1|4", "sleep-2|2", "sleep-3|3", "sleep-4|5"}),
             boost::test_tools::per_element());
  // A reset between live steps (what `rebuild` does) moves applied_seq back under the
  // pipeline: the next step reads again from the start.
  BOOST_REQUIRE(p->reset_derived());
  s.append({test::sleep_delivery("f", "sleep-5", 60)});
  BOOST_TEST(p->run_once(6));
  BOOST_TEST(p->applied_seq() == 2);
  while (p->run_once(6)) {
  }
  BOOST_TEST(p->applied_seq() == 6);
  BOOST_TEST(s.value("SELECT count(*) FROM summaries") == "5");
  BOOST_TEST(s.value("SELECT seq FROM summaries WHERE id = 'sleep-1'") == "4");
  BOOST_TEST(p->stats().step_failures == 0u);
}

// Live steps parse on the writer's thread while deliveries arrive, and on a thread of
// their own only for a backlog of at least parse_ahead_min_backlog that the inbox has not
// added to for parse_ahead_after_quiet; the thread stops when caught up or when the inbox
// grows again. Every delivery is applied once, in order, whichever parses it.
BOOST_DATA_TEST_CASE(live_steps_parse_on_a_thread_only_for_a_backlog_nothing_adds_to, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  const auto deliveries = [](int first, int last) { return sleep_deliveries(first, last, 4); };
  s.append(deliveries(1, 6));  // what a restart finds
  processor::ProcessorOptions options{.max_rows_per_step = 10000,
                                      .max_deliveries_per_step = 2,
                                      .parse_ahead_min_backlog = 3,
                                      .parse_ahead_after_quiet = std::chrono::milliseconds(0)};
  auto p = s.processor(options);
  BOOST_TEST(p->run_once(6));  // two deliveries per step: each full step says "more"
  BOOST_TEST(p->parsing_ahead());  // 6 waiting, none arriving
  BOOST_TEST(p->run_once(6));
  BOOST_TEST(p->run_once(6));
  BOOST_TEST(p->applied_seq() == 6);
  BOOST_TEST(p->parsing_ahead());
  BOOST_TEST(!p->run_once(6));
  BOOST_TEST(!p->parsing_ahead());  // caught up: stopped
  // Deliveries arriving between steps: inline, however long the backlog.
  s.append(deliveries(7, 12));
  BOOST_TEST(p->run_once(12));
  BOOST_TEST(!p->parsing_ahead());
  s.append(deliveries(13, 13));
  BOOST_TEST(p->run_once(13));
  BOOST_TEST(!p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 10);
  // Nothing new since the last step and 3 waiting: the thread again.
  BOOST_TEST(p->run_once(13));
  BOOST_TEST(p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 12);
  // A reset while it runs (what `rebuild` does) moves applied_seq back under it: that
  // step goes inline from the start, and the thread starts again at the next one.
  BOOST_REQUIRE(p->reset_derived());
  BOOST_TEST(p->run_once(13));
  BOOST_TEST(!p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 2);
  BOOST_TEST(p->run_once(13));
  BOOST_TEST(p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 4);
  while (p->run_once(13)) {
  }
  BOOST_TEST(p->applied_seq() == 13);
  // A delivery arrives while it runs: stopped at once, the step goes on inline.
  s.append(deliveries(14, 14));
  BOOST_TEST(!p->run_once(14));
  BOOST_TEST(!p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 14);
  BOOST_TEST(s.value("SELECT count(*) FROM deliveries WHERE status = 'processed'") == "14");
  BOOST_TEST(s.rows("SELECT id, seq FROM summaries ORDER BY id COLLATE \"C\"", 2) ==
                 (Strings{"sleep-0|12", "sleep-1|13", "sleep-2|14", "sleep-3|11"}),
             boost::test_tools::per_element());
  BOOST_TEST(p->stats().step_failures == 0u);
  BOOST_TEST(p->stats().parse_ahead_starts == 3u);

  // Each thread's reader connection is closed with it (SQLite may keep its descriptor of
  // the database file for the next connection: serve_processing_test says why), so
  // starting and stopping again leaves no more files open than one round did.
  const size_t after_one_round = test::open_files(getpid());
  for (int round = 1; round <= 3; ++round) {
    const int newest = 14 + 6 * round;
    s.append(deliveries(newest - 5, newest));
    BOOST_TEST(p->run_once(newest));  // grew: inline
    BOOST_TEST(p->run_once(newest));  // 4 waiting, none arriving: the thread
    BOOST_TEST(p->parsing_ahead());
    BOOST_TEST(p->stats().parse_ahead_starts == 3u + round);
    BOOST_TEST(p->run_once(newest));
    BOOST_TEST(!p->run_once(newest));
    BOOST_TEST(!p->parsing_ahead());
    BOOST_TEST(p->applied_seq() == newest);
    BOOST_TEST(test::open_files(getpid()) == after_one_round);
  }

  // With a quiet time, a backlog that has just grown waits for it; one found at start-up
  // has not grown since, so it does not.
  BackendStore other(backend);
  other.append(deliveries(1, 6));
  p.reset();
  options.parse_ahead_after_quiet = std::chrono::hours(1);
  auto q = other.processor(options);
  BOOST_TEST(q->run_once(6));
  BOOST_TEST(q->parsing_ahead());  // found at start-up
  other.append(deliveries(7, 12));
  BOOST_TEST(q->run_once(12));
  BOOST_TEST(!q->parsing_ahead());
  BOOST_TEST(q->run_once(12));  // nothing new, but not quiet for an hour
  BOOST_TEST(!q->parsing_ahead());
  while (q->run_once(12)) {
  }
  BOOST_TEST(q->applied_seq() == 12);
  BOOST_TEST(other.value("SELECT count(*) FROM deliveries WHERE status = 'processed'") == "12");
}

BOOST_DATA_TEST_CASE(a_restart_resumes_exactly_where_the_last_committed_step_ended, data::make(test::kBothBackends),
                     backend) {
  const auto corpus = test::make_corpus(120, 7);
  BackendStore reference(backend);
  reference.append(corpus);
  catch_up(*reference.processor());
  const auto expected = processed_state(reference);

  BackendStore s(backend);
  s.append(corpus);
  {
    auto p = s.processor({.max_rows_per_step = 10000, .max_deliveries_per_step = 7});
    for (int i = 0; i < 5; ++i) BOOST_TEST(p->run_once(120));
    BOOST_TEST(p->applied_seq() == 35);
  }  // "killed" between steps: the processor and the store are gone
  s.reopen();
  BOOST_TEST(s.value("SELECT applied_seq FROM processor_state") == "35");
  BOOST_TEST(s.value("SELECT count(*) FROM deliveries WHERE status = 'pending'") == "85");
  BOOST_TEST(s.value("SELECT count(*) FROM deliveries WHERE status <> 'pending' AND seq > 35") == "0");
  auto p = s.processor({.max_rows_per_step = 50, .max_deliveries_per_step = 7});
  catch_up(*p);
  BOOST_TEST(p->stats().processed + p->stats().invalid + p->stats().ignored + p->stats().unknown == 85u);
  const auto state = processed_state(s);
  for (const auto& [table, dump] : expected) {
    BOOST_TEST_CONTEXT("table " << table) { BOOST_TEST(state.at(table) == dump, boost::test_tools::per_element()); }
  }
}

BOOST_DATA_TEST_CASE(an_interrupted_step_leaves_nothing_behind, data::make(test::kBothBackends), backend) {
  BackendStore s(backend);
  s.append({test::sleep_delivery("a", "sleep-1", 1), test::sleep_delivery("b", "sleep-2", 2)});
  {
    // What a step writes, cut off before COMMIT: the connection closes mid-transaction.
    auto p = s.processor();
    s.abandon("INSERT INTO summaries (resource, id, source_type, seq, data) "
              "VALUES ('sleep', 'half', 'unknown', 1, '{}'); "
              "INSERT INTO delivery_outcomes (seq, status) VALUES (1, 'processed'); "
              "UPDATE processor_state SET applied_seq = 1");
  }
  s.reopen();
  BOOST_TEST(s.value("SELECT applied_seq FROM processor_state") == "0");
  BOOST_TEST(s.value("SELECT count(*) FROM summaries") == "0");
  BOOST_TEST(s.value("SELECT count(*) FROM delivery_outcomes") == "0");
  catch_up(*s.processor());
  BOOST_TEST(s.rows("SELECT id, seq FROM summaries ORDER BY id COLLATE \"C\"", 2) ==
                 (Strings{"sleep-1|1", "sleep-2|2"}),
             boost::test_tools::per_element());
}

// SQLite: a lock file beside the database; PostgreSQL: the processing lock (an advisory
// lock of the leader's session), so the second open fails (in use).
BOOST_DATA_TEST_CASE(one_processor_per_database_file, data::make(test::kBothBackends), backend) {
  BackendStore s(backend);
  auto second_store = s.another_store();
  auto first = s.processor();
  auto second = second_store->open_processing();
  BOOST_TEST(!second.ok());
  BOOST_TEST((second.error_kind() == ErrorKind::in_use));
  if (backend == test::Backend::sqlite) {
    BOOST_TEST(second.error() == s.location() +
                                     " is being processed by another healthhook process (a running `serve`, "
                                     "`rebuild`, `replay` or `purge-user`); stop it or let it finish first");
  } else {
    BOOST_TEST(second.error() == "the store is being processed by another healthhook instance or command (a "
                                 "`serve`, `rebuild` or `replay`)");
  }
  first.reset();
  BOOST_TEST(second_store->open_processing().ok());
}

BOOST_DATA_TEST_CASE(reset_derived_empties_every_derived_table_and_keeps_the_inbox_and_jobs,
                     data::make(test::kBothBackends), backend) {
  BackendStore s(backend);
  s.append(test::make_corpus(300, 11));
  auto p = s.processor();
  catch_up(*p);
  const std::string all_jobs = "SELECT * FROM jobs ORDER BY job_id";
  const Strings jobs = s.rows(all_jobs);
  BOOST_TEST(!jobs.empty());

  BOOST_REQUIRE(p->reset_derived());
  // derived_tables() names every table of the schema but the inbox, its outcomes and
  // cursor, the record of removed bodies and where retention's walk stands, jobs, the record of erasures, and the forwarding
  // outbox, the record of what its budget dropped, the paused destinations and how far
  // their entries are made (what waits to be sent stays through a rebuild), and each engine's own bookkeeping (SQLite's
  // sqlite_sequence numbers its ids; PostgreSQL's schema_migrations).
  Strings derived(store::schema::derived_tables().begin(), store::schema::derived_tables().end());
  std::sort(derived.begin(), derived.end());
  const std::string kept = "('inbox', 'delivery_outcomes', 'processor_state', 'removed_bodies', 'retention_walk', 'jobs', 'erasures', "
                           "'outbox', 'outbox_dropped', 'forward_pauses', 'forward_positions', 'sqlite_sequence', "
                           "'schema_migrations', 'processor_shards')";
  const Strings schema_tables =
      s.rows(backend == test::Backend::sqlite
                 ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN " + kept + " ORDER BY name"
                 : "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND "
                   "table_type = 'BASE TABLE' AND table_name NOT IN " + kept + " ORDER BY table_name COLLATE \"C\"",
             1);
  BOOST_TEST(derived == schema_tables, boost::test_tools::per_element());
  for (const auto& table : derived) BOOST_TEST(s.value("SELECT count(*) FROM " + table) == "0", table);
  BOOST_TEST(s.value("SELECT applied_seq FROM processor_state") == "0");
  BOOST_TEST(s.rows("SELECT DISTINCT status, family, error FROM deliveries", 3) == Strings{"pending|NULL|NULL"},
             boost::test_tools::per_element());
  BOOST_TEST(s.value("SELECT count(*) FROM delivery_outcomes") == "0");
  BOOST_TEST(s.value("SELECT count(*) FROM deliveries") == "300");
  BOOST_TEST(s.rows(all_jobs) == jobs, boost::test_tools::per_element());

  // The same processor notices the reset (its cached series ids are gone) and re-applies.
  catch_up(*p);
  BOOST_TEST(p->applied_seq() == 300);
  BOOST_TEST(s.value("SELECT count(*) FROM samples s LEFT JOIN series USING (series_id) "
                     "WHERE series.user_id IS NULL") == "0");
  BOOST_TEST(s.rows(all_jobs) == jobs, boost::test_tools::per_element());
}

BOOST_DATA_TEST_CASE(catching_up_marks_a_delivery_the_store_rejects_and_goes_on, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  reject_summaries_with_id(s, "poison");
  std::vector<store::NewDelivery> inbox;
  for (int i = 0; i < 300; ++i) {
    inbox.push_back(test::sleep_delivery("m" + std::to_string(i), i == 123 ? "poison" : "s" + std::to_string(i % 5), i));
  }
  s.append(inbox);
  // A backlog this long is read and parsed ahead on a thread; the step that meets the
  // rejected delivery is redone inline, then reading ahead resumes.
  auto p = s.processor(processor::ProcessorOptions{.max_rows_per_step = 100, .max_deliveries_per_step = 100});
  catch_up(*p);
  BOOST_TEST(p->applied_seq() == 300);
  BOOST_TEST(s.rows("SELECT seq, status, error FROM deliveries WHERE status <> 'processed'", 3) ==
                 Strings{"124|invalid|" + rejection(s)},
             boost::test_tools::per_element());
  BOOST_TEST(s.rows("SELECT id, seq FROM summaries ORDER BY id COLLATE \"C\"", 2) ==
                 (Strings{"s0|296", "s1|297", "s2|298", "s3|299", "s4|300"}),
             boost::test_tools::per_element());
  // Each the last version to arrive (delivery i, at seq i + 1, has the score i).
  for (int i = 295; i < 300; ++i) {
    const std::string data = s.value("SELECT data FROM summaries WHERE seq = " + std::to_string(i + 1));
    BOOST_TEST(data.find("\"score\":" + std::to_string(i)) != std::string::npos, data);
  }
  BOOST_TEST(s.value("SELECT count(*) FROM changes") == "300");  // 299 summaries, 1 user
  BOOST_TEST(p->stats().steps == 3u);
}

// A slot that parsed a large body (a fetched page) gives its buffers back once applied,
// and is reused for the next rows as before.
BOOST_DATA_TEST_CASE(a_pipeline_slot_frees_a_large_body_once_it_is_applied, data::make(test::kBothBackends),
                     backend) {
  BackendStore s(backend);
  auto big = test::heartrate_delivery("big", 1717200000000, 30000, 60);
  BOOST_REQUIRE_GT(big.body.size(), processor::ParsePipeline::kTrimAbove);
  s.append({test::sleep_delivery("a", "sleep-1", 10), big, test::sleep_delivery("b", "sleep-2", 20)});
  auto pipeline = processor::ParsePipeline::start(s.reader(store::ReaderUse::follow), 0, 3,
                                                  processor::ParsePipeline::Mode::follow);
  BOOST_REQUIRE_MESSAGE(pipeline, pipeline.error());
  auto& p = **pipeline;
  int64_t seq = 0;
  std::vector<size_t> sample_counts;
  for (;;) {
    auto row = p.next(seq);
    BOOST_REQUIRE_MESSAGE(row, row.error());
    if (*row == nullptr) break;
    seq = (*row)->seq;
    size_t samples = 0;
    for (const auto& batch : (*row)->rows->sample_batches) samples += batch.samples.size();
    sample_counts.push_back(samples);
    BOOST_TEST(p.slot_trims() == (seq == 3 ? 1u : 0u), "after seq " << seq);  // the big row's slot, once released
  }
  p.end_step();
  BOOST_TEST(sample_counts == (std::vector<size_t>{0, 30000, 0}), boost::test_tools::per_element());
  // Rows that come later parse as before (the trimmed slot among the free ones).
  s.append({test::heartrate_delivery("big-2", 1717300000000, 30000, 61), test::sleep_delivery("c", "sleep-3", 30)});
  p.extend(5);
  auto fourth = p.next(3);
  BOOST_REQUIRE_MESSAGE(fourth && *fourth, "row 4");
  BOOST_TEST((*fourth)->seq == 4);
  BOOST_TEST((*fourth)->rows->sample_batches.size() == 1u);
  BOOST_TEST((*fourth)->rows->sample_batches.front().samples.size() == 30000u);
  auto fifth = p.next(4);
  BOOST_REQUIRE_MESSAGE(fifth && *fifth, "row 5");
  BOOST_TEST((*fifth)->rows->summaries.size() == 1u);  // parsed in the slot trimmed after row 2
  BOOST_TEST(p.slot_trims() == 2u);
}

// Following the inbox, the pipeline reads and parses every committed row (read_ahead():
// on SQLite while the rows' WAL sync runs) but hands out none past the step's end
// (extend(): the rows the writer says are on disk), also when that end falls in a gap
// between seqs (PostgreSQL's sequence leaves gaps as well).
BOOST_DATA_TEST_CASE(a_following_pipeline_parses_committed_rows_ahead_and_hands_out_only_those_on_disk,
                     data::make(test::kBothBackends), backend) {
  BackendStore s(backend);
  s.append({test::sleep_delivery("a", "sleep-1", 10), test::sleep_delivery("b", "sleep-2", 20),
            test::sleep_delivery("c", "sleep-3", 30)});
  s.exec("UPDATE inbox SET seq = 5 WHERE seq = 3");  // seqs 1, 2, 5
  auto pipeline = processor::ParsePipeline::start(s.reader(store::ReaderUse::follow), 0, 1,
                                                  processor::ParsePipeline::Mode::follow);
  BOOST_REQUIRE_MESSAGE(pipeline, pipeline.error());
  auto& p = **pipeline;
  auto expect_row = [&](int64_t after_seq, int64_t seq) {
    auto row = p.next(after_seq);
    BOOST_REQUIRE_MESSAGE(row, row.error());
    BOOST_REQUIRE_MESSAGE(*row != nullptr, "a row after " << after_seq);
    BOOST_TEST((*row)->seq == seq);
    BOOST_TEST((*row)->rows->summaries.size() == 1u);
  };
  auto expect_step_end = [&](int64_t after_seq) {
    auto row = p.next(after_seq);
    BOOST_REQUIRE_MESSAGE(row, row.error());
    BOOST_TEST_MESSAGE("step end after " << after_seq);
    BOOST_TEST((*row == nullptr ? 0 : (*row)->seq) == 0);
    p.end_step();
  };
  expect_row(0, 1);
  expect_step_end(1);

  p.read_ahead(5);
  for (int i = 0; i < 1000 && p.rows_parsed() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_TEST(p.rows_parsed() == 3u);  // rows 2 and 5 parsed before they may be applied...
  expect_step_end(1);                 // ...and not handed out

  p.extend(3);  // on disk up to 3: row 2, not row 5
  expect_row(1, 2);
  expect_step_end(2);
  // Every row up to the step's end was handed out: the next step starts there, in the gap.
  BOOST_TEST(p.read_through() == 3);
  p.extend(5);
  expect_row(3, 5);
  expect_step_end(5);
  BOOST_TEST(p.rows_parsed() == 3u);  // each row read once
}

// Waits (bounded) until `p` has applied up to `seq`; false if it never does.
bool applied_within_a_minute(const processor::Processor& p, int64_t seq) {
  for (int i = 0; i < 3000 && p.applied_seq() < seq; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return p.applied_seq() >= seq;
}

// What PostgreSQL's writer passes on after every commit: no bound (its steps stop at the
// inbox horizon instead), so the same value every time.
constexpr int64_t kNoBound = std::numeric_limits<int64_t>::max();

// A processor as `serve` opens one on `side` (another store on the same database, so that
// the test's appends use a connection of their own): beside the writer on PostgreSQL, on a
// session of its own; on SQLite on the store's connection, which only the processor uses.
std::unique_ptr<processor::Processor> serve_processor(store::Store& side, processor::ProcessorOptions options) {
  auto processing = side.can_process_alongside() ? side.open_processing_alongside(store::Leadership::now)
                                                 : side.open_processing(store::Leadership::now);
  return test::twin_must(processor::Processor::create(test::twin_must(std::move(processing)), options));
}

// processor/processing_thread.h: every pass-on from the writer wakes the thread, even with
// the bound of the last one, and it steps until caught up. A stop with work waiting
// returns, leaving whole steps applied (a stop during a step: the PostgreSQL case below).
BOOST_DATA_TEST_CASE(a_processing_thread_steps_at_every_pass_on_and_stops_with_work_waiting,
                     data::make(test::kBothBackends), backend) {
  BackendStore s(backend);
  auto side = s.another_store();
  auto p = serve_processor(*side, {.max_rows_per_step = 10, .max_deliveries_per_step = 10});
  processor::ProcessingThread thread(*p, std::chrono::hours(1));  // woken only by pass-ons
  s.append(sleep_deliveries(1, 30));
  BOOST_TEST(!thread.run_once(kNoBound));  // the writer need not call again: the thread does the work
  BOOST_REQUIRE(applied_within_a_minute(*p, 30));
  s.append(sleep_deliveries(31, 60));
  BOOST_TEST(!thread.run_once(kNoBound));  // the same bound as before still wakes it
  BOOST_REQUIRE(applied_within_a_minute(*p, 60));
  BOOST_TEST(p->stats().steps.load() >= 6u);  // 10 deliveries per step

  s.append(sleep_deliveries(61, 260));
  BOOST_TEST(!thread.run_once(kNoBound));
  thread.stop();
  BOOST_TEST(!thread.run_once(kNoBound));  // after stop(): nothing to wake, and no hang
  const int64_t applied = p->applied_seq();
  BOOST_TEST(applied % 10 == 0);
  BOOST_TEST(s.value("SELECT applied_seq FROM processor_state") == std::to_string(applied));
  BOOST_TEST(s.value("SELECT count(*) FROM summaries") == std::to_string(applied));
}

// Store::open_processing_alongside: PostgreSQL opens a session of its own (its processing
// lock is not the write connection's), which stands by while another leads and takes over
// on an idle wake-up, with nothing new passed on. SQLite has one writer: unavailable.
BOOST_DATA_TEST_CASE(processing_alongside_the_writer_has_a_session_of_its_own_and_takes_over_when_idle,
                     data::make(test::kBothBackends), backend) {
  BackendStore s(backend);
  if (backend == test::Backend::sqlite) {
    BOOST_TEST(!s.store().can_process_alongside());
    auto alongside = s.store().open_processing_alongside(store::Leadership::when_free);
    BOOST_TEST(!alongside.ok());
    BOOST_TEST((alongside.error_kind() == ErrorKind::unavailable));
    return;
  }
  BOOST_TEST(s.store().can_process_alongside());
  s.append(sleep_deliveries(1, 20));
  {
    // Its own session: the write connection's session cannot take the lock it holds.
    auto alongside = test::twin_must(s.store().open_processing_alongside(store::Leadership::now));
    auto on_writer = s.store().open_processing(store::Leadership::now);
    BOOST_TEST(!on_writer.ok());
    BOOST_TEST((on_writer.error_kind() == ErrorKind::in_use));
  }
  auto leader_store = s.another_store();
  auto leader = test::twin_must(
      processor::Processor::create(test::twin_must(leader_store->open_processing(store::Leadership::now))));
  auto standby = test::twin_must(processor::Processor::create(
      test::twin_must(s.store().open_processing_alongside(store::Leadership::when_free))));
  processor::ProcessingThread thread(*standby, std::chrono::milliseconds(20));
  BOOST_TEST(!thread.run_once(kNoBound));
  leader.reset();  // the leader stops: its session lets the lock go
  BOOST_REQUIRE(applied_within_a_minute(*standby, 20));
  thread.stop();
  BOOST_TEST(standby->stats().processed.load() == 20u);  // all applied by the standby, once
  BOOST_TEST(s.value("SELECT applied_seq FROM processor_state") == "20");
  BOOST_TEST(s.value("SELECT count(*) FROM deliveries WHERE status = 'processed'") == "20");
}

// The processing session waits for a lock no longer than the write connection does
// (busy_timeout_ms, 5 s by default): the step fails busy and is retried, so a lock held
// elsewhere hangs neither processing nor a stop that comes during the step.
BOOST_AUTO_TEST_CASE(a_step_alongside_the_writer_waits_for_a_lock_only_busy_timeout_ms) {
  BackendStore s(test::Backend::postgres);
  auto p = test::twin_must(processor::Processor::create(
      test::twin_must(s.store().open_processing_alongside(store::Leadership::now))));  // prepares its statements
  processor::ProcessingThread thread(*p, std::chrono::milliseconds(20));
  // Declared after the thread, so destroyed before it: a failed check below lets the lock
  // go before the thread is joined, and the case fails instead of hanging.
  struct LockReleased {
    BackendStore& s;
    ~LockReleased() {
      try {
        s.exec("ROLLBACK");
      } catch (...) {
      }
    }
  } released{s};
  // A step of the session waits for a lock that another session holds.
  static constexpr const char* kLockWaits =
      "SELECT count(*) FROM pg_locks WHERE NOT granted AND database = "
      "(SELECT oid FROM pg_database WHERE datname = current_database())";
  const auto lock_summaries = [&s] { s.exec("BEGIN; LOCK TABLE summaries IN ACCESS EXCLUSIVE MODE"); };
  const auto wait_for_the_step_to_block = [&s] {
    for (int i = 0; i < 3000 && s.value(kLockWaits) == "0"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    BOOST_REQUIRE(s.value(kLockWaits) != "0");
  };

  s.append(sleep_deliveries(1, 5));
  lock_summaries();
  BOOST_TEST(!thread.run_once(kNoBound));
  wait_for_the_step_to_block();
  for (int i = 0; i < 3000 && p->stats().step_failures.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_REQUIRE(p->stats().step_failures.load() >= 1u);  // busy after busy_timeout_ms, not waiting for ever
  BOOST_TEST(p->applied_seq() == 0);
  s.exec("COMMIT");
  BOOST_REQUIRE(applied_within_a_minute(*p, 5));  // the retry applies them

  // A stop while the step waits for the lock returns once the wait fails.
  s.append(sleep_deliveries(6, 10));
  lock_summaries();
  BOOST_TEST(!thread.run_once(kNoBound));
  wait_for_the_step_to_block();
  thread.stop();
  s.exec("COMMIT");
  BOOST_TEST(p->applied_seq() == 5);
  BOOST_TEST(s.value("SELECT applied_seq FROM processor_state") == "5");
}

// What only SQLite has: the durable seq the writer reports after each WAL sync (a row
// committed after it may be lost to a power failure; a PostgreSQL commit is durable when
// it returns), and a full disk, made here with SQLite's page limit.
BOOST_AUTO_TEST_SUITE(sqlite_only)

using hh::test::rows;
using hh::test::TempDir;
using hh::test::value;

namespace {

std::unique_ptr<processor::Processor> make_processor(sqlite::Connection& db, processor::ProcessorOptions options = {}) {
  auto created = test::sqlite_processor(db, options);
  BOOST_REQUIRE_MESSAGE(created, created.error());
  return std::move(*created);
}

Strings outcomes(sqlite::Connection& db) { return rows(db, "SELECT seq, status, family, error FROM deliveries ORDER BY seq"); }

}  // namespace

// Live steps stop at the seq the writer says is on disk (store/inbox_writer.h): a row
// committed after it may still be lost to a power failure and its seq given to another
// delivery, so nothing is derived from it yet, even when the processor is idle.
BOOST_AUTO_TEST_CASE(live_steps_apply_no_row_after_the_durable_seq) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  auto p = make_processor(db);
  test::append_deliveries(db, {test::sleep_delivery("a", "sleep-1", 10), test::sleep_delivery("b", "sleep-2", 20),
              test::sleep_delivery("c", "sleep-3", 30)});
  BOOST_TEST(!p->run_once(2));
  BOOST_TEST(p->applied_seq() == 2);
  BOOST_TEST(!p->run_once(2));  // caught up to the durable seq: row 3 waits
  BOOST_TEST(p->applied_seq() == 2);
  BOOST_TEST(outcomes(db).back() == "3|'pending'|NULL|NULL");
  BOOST_TEST(value(db, "SELECT max(seq) FROM changes") == "2");
  BOOST_TEST(!p->run_once(3));  // now on disk
  BOOST_TEST(outcomes(db).back() == "3|'processed'|'summary'|NULL");
}

BOOST_AUTO_TEST_CASE(a_full_disk_rolls_the_step_back_and_a_later_run_applies_it) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  test::append_deliveries(db, {test::sleep_delivery("a", "sleep-1", 1),
                               test::heartrate_delivery("b", 1717200000000, 3000, 60)});
  const std::string pages = value(db, "PRAGMA page_count");
  BOOST_REQUIRE(db.exec("PRAGMA max_page_count = " + pages));
  auto p = make_processor(db);
  BOOST_TEST(!p->run_once(2));  // failed: nothing more now, retried later
  BOOST_TEST(p->stats().step_failures == 1u);
  BOOST_TEST(p->applied_seq() == 0);
  BOOST_TEST(value(db, "SELECT applied_seq FROM processor_state") == "0");
  BOOST_TEST(value(db, "SELECT group_concat(status, ',') FROM deliveries") == "'pending,pending'");
  BOOST_TEST(test::count(db, "summaries") == 0);
  BOOST_TEST(!p->run_once(2));  // within the retry delay: does not even try
  BOOST_TEST(p->stats().step_failures == 1u);

  BOOST_REQUIRE(db.exec("PRAGMA max_page_count = 1000000"));
  catch_up(*p);
  BOOST_TEST(p->applied_seq() == 2);
  BOOST_TEST(test::count(db, "samples") == 3000);
  BOOST_TEST(value(db, "SELECT group_concat(status, ',') FROM deliveries") == "'processed,processed'");
}

BOOST_AUTO_TEST_SUITE_END()  // sqlite_only

BOOST_AUTO_TEST_SUITE_END()  // processor_test
