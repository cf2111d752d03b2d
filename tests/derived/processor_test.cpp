// The processor over a real inbox: arrival order, poisoned deliveries, store failures,
// restarts, the processing lock, and reset_derived.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <thread>
#include <chrono>

#include "processor/parse_pipeline.h"
#include "processor/processor.h"
#include "store/sqlite/delivery_cursor.h"
#include "store/sqlite/sqlite_processing_store.h"
#include "store/sqlite/derived/derived_tables.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/derived/corpus.h"
#include "tests/derived/sqlite_processor.h"
#include "tests/derived/store_dump.h"
#include "tests/support/open_files.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(processor_test)

using namespace hh;
using hh::test::rows;
using hh::test::TempDir;
using hh::test::value;
using Strings = std::vector<std::string>;

namespace {

std::unique_ptr<processor::Processor> make_processor(sqlite::Connection& db, processor::ProcessorOptions options = {}) {
  auto created = test::sqlite_processor(db, options);
  BOOST_REQUIRE_MESSAGE(created, created.error());
  return std::move(*created);
}

void catch_up(processor::Processor& p) {
  auto done = p.run_until_caught_up(nullptr);
  BOOST_REQUIRE_MESSAGE(done, done.error());
}

Strings outcomes(sqlite::Connection& db) {
  return rows(db, "SELECT seq, status, family, error FROM deliveries ORDER BY seq");
}

}  // namespace

BOOST_AUTO_TEST_CASE(whatever_order_four_versions_arrive_in_the_last_to_arrive_wins) {
  const std::array<int, 4> scores{10, 20, 30, 40};
  std::array<size_t, 4> order{0, 1, 2, 3};
  int permutations = 0;
  do {
    TempDir dir;
    auto db = test::open_store(dir.file("healthhook.db"));
    std::vector<store::NewDelivery> arrivals;
    for (size_t i : order) {
      arrivals.push_back(test::sleep_delivery("msg_" + std::to_string(i), "sleep-1", scores[i]));
    }
    test::append_deliveries(db, arrivals);
    auto p = make_processor(db);
    catch_up(*p);
    // The highest seq is the last arrival: order[3].
    BOOST_TEST(value(db, "SELECT seq || ' ' || json_extract(data, '$.score') FROM summaries") ==
               "'4 " + std::to_string(scores[order[3]]) + "'");
    BOOST_TEST(value(db, "SELECT group_concat(op, ',') FROM changes WHERE table_name = 'summaries'") ==
               "'insert,update,update,update'");
    // The user appears once, with the first delivery applied; the others change nothing of it.
    BOOST_TEST(value(db, "SELECT group_concat(seq || ':' || op, ',') FROM changes WHERE table_name = 'users'") ==
               "'1:insert'");
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  BOOST_TEST(permutations == 24);
}

BOOST_AUTO_TEST_CASE(an_invalid_delivery_is_marked_and_the_next_one_is_processed) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  test::append_deliveries(db, {test::sleep_delivery("a", "sleep-1", 1), test::raw_delivery("b", "{not json"),
              test::raw_delivery("c", R"({"data":{}})"), test::sleep_delivery("d", "sleep-2", 2),
              test::raw_delivery("e", R"({"event_type":"daily.timeseries.hypnogram.created","data":{}})"),
              test::raw_delivery("f", R"({"event_type":"something.new","data":{}})")});
  auto p = make_processor(db);
  BOOST_TEST(!p->run_once(6));  // one step takes all six
  BOOST_TEST(outcomes(db) == (Strings{"1|'processed'|'summary'|NULL",
                                      "2|'invalid'|'other'|'body: not valid JSON (JSON document ended early in the middle of an "
                                      "object or array.)'",
                                      "3|'invalid'|'other'|'event_type: missing'",
                                      "4|'processed'|'summary'|NULL",
                                      "5|'ignored'|'hypnogram'|NULL",
                                      "6|'unknown'|'other'|NULL"}),
             boost::test_tools::per_element());
  BOOST_TEST(rows(db, "SELECT id FROM summaries ORDER BY id") == (Strings{"'sleep-1'", "'sleep-2'"}),
             boost::test_tools::per_element());
  BOOST_TEST(p->stats().processed == 2u);
  BOOST_TEST(p->stats().invalid == 2u);
  BOOST_TEST(p->stats().ignored == 1u);
  BOOST_TEST(p->stats().unknown == 1u);
  BOOST_TEST(p->applied_seq() == 6);
}

// Parsed inline (the default for a short backlog) and on the parse thread (whose failed
// step is retried inline): either way the retry stops at the durable seq too, and row 4,
// committed but not on disk, stays pending.
BOOST_AUTO_TEST_CASE(a_delivery_the_store_rejects_is_marked_invalid_without_its_rows) {
  for (const bool parse_ahead : {false, true}) {
    BOOST_TEST_CONTEXT("parse ahead: " << parse_ahead) {
      TempDir dir;
      auto db = test::open_store(dir.file("healthhook.db"));
      BOOST_REQUIRE(db.exec("CREATE TRIGGER reject BEFORE INSERT ON summaries WHEN NEW.id = 'poison' "
                            "BEGIN SELECT RAISE(ABORT, 'rejected by a test trigger'); END"));
      test::append_deliveries(db, {test::heartrate_delivery("a", 1717200000000, 3, 60),
                                   test::sleep_delivery("b", "poison", 1),
                  test::sleep_delivery("c", "sleep-2", 2), test::sleep_delivery("d", "sleep-3", 3)});
      processor::ProcessorOptions options;
      if (parse_ahead) options.parse_ahead_min_backlog = 1;
      auto p = make_processor(db, options);
      BOOST_TEST(!p->run_once(3));
      BOOST_TEST(outcomes(db) ==
                     (Strings{"1|'processed'|'timeseries'|NULL",
                              "2|'invalid'|'summary'|'summaries: rejected by a test trigger'",
                              "3|'processed'|'summary'|NULL", "4|'pending'|NULL|NULL"}),
                 boost::test_tools::per_element());
      BOOST_TEST(test::count(db, "samples") == 3);
      BOOST_TEST(rows(db, "SELECT id FROM summaries") == Strings{"'sleep-2'"}, boost::test_tools::per_element());
      BOOST_TEST(value(db, "SELECT group_concat(seq || ':' || table_name, ',') FROM changes") ==
                 "'1:users,1:samples,3:summaries'");
    }
  }
}

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

namespace {

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

}  // namespace

BOOST_AUTO_TEST_CASE(a_step_yields_to_waiting_deliveries_after_its_first_few) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  auto p = make_processor(db);
  test::append_deliveries(db, sleep_deliveries(1, 10));
  bool waiting = true;
  int asked = 0;
  p->yield_to([&] {
    ++asked;
    return waiting;
  });
  const auto first = static_cast<int64_t>(processor::Processor::kDeliveriesBeforeYield);
  BOOST_TEST(p->run_once(10));  // deliveries wait: the step ends early and says "more"
  BOOST_TEST(p->applied_seq() == first);
  BOOST_TEST(value(db, "SELECT count(*) FROM summaries") == std::to_string(first));
  BOOST_TEST(p->run_once(10));  // still waiting: the next step applies as many again
  BOOST_TEST(p->applied_seq() == 2 * first);
  waiting = false;
  BOOST_TEST(!p->run_once(10));  // nothing waits: the rest in one step
  BOOST_TEST(p->applied_seq() == 10);
  BOOST_TEST(asked > 0);
  BOOST_TEST(value(db, "SELECT count(*) FROM delivery_outcomes WHERE status = 'processed'") == "10");
}

BOOST_AUTO_TEST_CASE(a_step_far_behind_yields_only_after_a_short_steps_work) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  auto p = make_processor(db);
  test::append_deliveries(db, sleep_deliveries(1, 20));
  p->yield_to([] { return true; }, /*max_backlog=*/12);  // deliveries always wait
  // 20 behind: far behind, so no yield before kBehindStep's 2,000 deliveries (or 10,000
  // rows): the whole backlog in one step.
  BOOST_TEST(!p->run_once(20));
  BOOST_TEST(p->applied_seq() == 20);
  test::append_deliveries(db, sleep_deliveries(21, 25));
  BOOST_TEST(p->run_once(25));  // 5 behind: yields again after its first few
  BOOST_TEST(p->applied_seq() == 20 + static_cast<int64_t>(processor::Processor::kDeliveriesBeforeYield));
}

// Parsing ahead on a thread for any backlog (a threshold of one delivery, no quiet time),
// so the steps below switch between the thread and inline parsing as the inbox grows.
BOOST_AUTO_TEST_CASE(live_steps_apply_rows_parsed_ahead_as_the_inbox_grows) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  auto p = make_processor(db, processor::ProcessorOptions{.max_rows_per_step = 10000,
                                                          .max_deliveries_per_step = 2,
                                                          .parse_ahead_min_backlog = 1,
                                                          .parse_ahead_after_quiet = std::chrono::milliseconds(0)});
  test::append_deliveries(db, {test::sleep_delivery("a", "sleep-1", 10), test::sleep_delivery("b", "sleep-2", 20),
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
  test::append_deliveries(db, {test::sleep_delivery("d", "sleep-1", 40), test::sleep_delivery("e", "sleep-4", 50)});
  BOOST_TEST(p->run_once(5));  // at the step's limit of two
  BOOST_TEST(p->applied_seq() == 5);
  BOOST_TEST(!p->run_once(5));
  BOOST_TEST(value(db, "SELECT group_concat(status, ',') FROM deliveries") ==
             "'processed,processed,processed,processed,processed'");
  BOOST_TEST(rows(db, "SELECT id, seq FROM summaries ORDER BY id") ==
                 (Strings{"'sleep-1'|4", "'sleep-2'|2", "'sleep-3'|3", "'sleep-4'|5"}),
             boost::test_tools::per_element());
  // A reset between live steps (what `rebuild` does) moves applied_seq back under the
  // pipeline: the next step reads again from the start.
  BOOST_REQUIRE(store::reset_derived(db, {}));
  test::append_deliveries(db, {test::sleep_delivery("f", "sleep-5", 60)});
  BOOST_TEST(p->run_once(6));
  BOOST_TEST(p->applied_seq() == 2);
  while (p->run_once(6)) {
  }
  BOOST_TEST(p->applied_seq() == 6);
  BOOST_TEST(test::count(db, "summaries") == 5);
  BOOST_TEST(value(db, "SELECT seq FROM summaries WHERE id = 'sleep-1'") == "4");
  BOOST_TEST(p->stats().step_failures == 0u);
}

// Live steps parse on the writer's thread while deliveries arrive, and on a thread of
// their own only for a backlog of at least parse_ahead_min_backlog that the inbox has not
// added to for parse_ahead_after_quiet; the thread stops when caught up or when the inbox
// grows again. Every delivery is applied once, in order, whichever parses it.
BOOST_AUTO_TEST_CASE(live_steps_parse_on_a_thread_only_for_a_backlog_nothing_adds_to) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  const auto deliveries = [](int first, int last) { return sleep_deliveries(first, last, 4); };
  test::append_deliveries(db, deliveries(1, 6));  // what a restart finds
  processor::ProcessorOptions options{.max_rows_per_step = 10000,
                                      .max_deliveries_per_step = 2,
                                      .parse_ahead_min_backlog = 3,
                                      .parse_ahead_after_quiet = std::chrono::milliseconds(0)};
  auto p = make_processor(db, options);
  BOOST_TEST(p->run_once(6));  // two deliveries per step: each full step says "more"
  BOOST_TEST(p->parsing_ahead());  // 6 waiting, none arriving
  BOOST_TEST(p->run_once(6));
  BOOST_TEST(p->run_once(6));
  BOOST_TEST(p->applied_seq() == 6);
  BOOST_TEST(p->parsing_ahead());
  BOOST_TEST(!p->run_once(6));
  BOOST_TEST(!p->parsing_ahead());  // caught up: stopped
  // Deliveries arriving between steps: inline, however long the backlog.
  test::append_deliveries(db, deliveries(7, 12));
  BOOST_TEST(p->run_once(12));
  BOOST_TEST(!p->parsing_ahead());
  test::append_deliveries(db, deliveries(13, 13));
  BOOST_TEST(p->run_once(13));
  BOOST_TEST(!p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 10);
  // Nothing new since the last step and 3 waiting: the thread again.
  BOOST_TEST(p->run_once(13));
  BOOST_TEST(p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 12);
  // A reset while it runs (what `rebuild` does) moves applied_seq back under it: that
  // step goes inline from the start, and the thread starts again at the next one.
  BOOST_REQUIRE(store::reset_derived(db, {}));
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
  test::append_deliveries(db, deliveries(14, 14));
  BOOST_TEST(!p->run_once(14));
  BOOST_TEST(!p->parsing_ahead());
  BOOST_TEST(p->applied_seq() == 14);
  BOOST_TEST(value(db, "SELECT count(*) FROM deliveries WHERE status = 'processed'") == "14");
  BOOST_TEST(rows(db, "SELECT id, seq FROM summaries ORDER BY id") ==
                 (Strings{"'sleep-0'|12", "'sleep-1'|13", "'sleep-2'|14", "'sleep-3'|11"}),
             boost::test_tools::per_element());
  BOOST_TEST(p->stats().step_failures == 0u);
  BOOST_TEST(p->stats().parse_ahead_starts == 3u);

  // Each thread's read connection is closed with it; SQLite may keep its descriptor of the
  // database file for the next connection (serve_processing_test says why), so starting
  // and stopping again leaves no more files open than one round did.
  const size_t after_one_round = test::open_files(getpid());
  for (int round = 1; round <= 3; ++round) {
    const int newest = 14 + 6 * round;
    test::append_deliveries(db, deliveries(newest - 5, newest));
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
  auto reopened_db = test::open_store(dir.file("other.db"));
  test::append_deliveries(reopened_db, deliveries(1, 6));
  p.reset();
  options.parse_ahead_after_quiet = std::chrono::hours(1);
  auto q = make_processor(reopened_db, options);
  BOOST_TEST(q->run_once(6));
  BOOST_TEST(q->parsing_ahead());  // found at start-up
  test::append_deliveries(reopened_db, deliveries(7, 12));
  BOOST_TEST(q->run_once(12));
  BOOST_TEST(!q->parsing_ahead());
  BOOST_TEST(q->run_once(12));  // nothing new, but not quiet for an hour
  BOOST_TEST(!q->parsing_ahead());
  while (q->run_once(12)) {
  }
  BOOST_TEST(q->applied_seq() == 12);
  BOOST_TEST(value(reopened_db, "SELECT count(*) FROM deliveries WHERE status = 'processed'") == "12");
}

// A slot that parsed a large body (a fetched page) gives its buffers back once applied,
// and is reused for the next rows as before.
BOOST_AUTO_TEST_CASE(a_pipeline_slot_frees_a_large_body_once_it_is_applied) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto db = test::open_store(path);
  auto big = test::heartrate_delivery("big", 1717200000000, 30000, 60);
  BOOST_REQUIRE_GT(big.body.size(), processor::ParsePipeline::kTrimAbove);
  test::append_deliveries(db, {test::sleep_delivery("a", "sleep-1", 10),
                               big, test::sleep_delivery("b", "sleep-2", 20)});
  auto pipeline = processor::ParsePipeline::start(store::open_delivery_reader(path, store::ReaderUse::follow).value(), 0, 3,
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
  test::append_deliveries(db, {test::heartrate_delivery("big-2", 1717300000000, 30000, 61),
                               test::sleep_delivery("c", "sleep-3", 30)});
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

// Following the inbox, the pipeline reads and parses every committed row (read_ahead(),
// while the rows' WAL sync runs) but hands out none past the step's end (extend(), the
// rows on disk), also when that end falls in a gap between seqs.
BOOST_AUTO_TEST_CASE(a_following_pipeline_parses_committed_rows_ahead_and_hands_out_only_those_on_disk) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  auto db = test::open_store(path);
  test::append_deliveries(db, {test::sleep_delivery("a", "sleep-1", 10), test::sleep_delivery("b", "sleep-2", 20),
              test::sleep_delivery("c", "sleep-3", 30)});
  BOOST_REQUIRE(db.exec("UPDATE inbox SET seq = 5 WHERE seq = 3"));  // seqs 1, 2, 5
  auto pipeline = processor::ParsePipeline::start(store::open_delivery_reader(path, store::ReaderUse::follow).value(), 0, 1,
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
  p.extend(5);
  expect_row(2, 5);
  expect_step_end(5);
  BOOST_TEST(p.rows_parsed() == 3u);  // each row read once
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

BOOST_AUTO_TEST_CASE(a_restart_resumes_exactly_where_the_last_committed_step_ended) {
  const auto corpus = test::make_corpus(120, 7);
  TempDir dir;
  std::map<std::string, Strings> expected;
  {
    auto reference = test::open_store(dir.file("reference.db"));
    test::append_deliveries(reference, corpus);
    catch_up(*make_processor(reference));
    expected = test::dump_derived_state(reference);
  }
  const std::string path = dir.file("healthhook.db");
  {
    auto db = test::open_store(path);
    test::append_deliveries(db, corpus);
    auto p = make_processor(db, processor::ProcessorOptions{.max_rows_per_step = 10000, .max_deliveries_per_step = 7});
    for (int i = 0; i < 5; ++i) BOOST_TEST(p->run_once(120));
    BOOST_TEST(p->applied_seq() == 35);
  }  // "killed": processor and connection gone between steps
  {
    auto db = test::open_store(path);
    BOOST_TEST(value(db, "SELECT applied_seq FROM processor_state") == "35");
    BOOST_TEST(test::count(db, "deliveries WHERE status = 'pending'") == 85);
    BOOST_TEST(test::count(db, "deliveries WHERE status <> 'pending' AND seq > 35") == 0);
    auto p = make_processor(db, processor::ProcessorOptions{.max_rows_per_step = 50, .max_deliveries_per_step = 7});
    catch_up(*p);
    BOOST_TEST(p->stats().processed + p->stats().invalid + p->stats().ignored + p->stats().unknown == 85u);
    const auto state = test::dump_derived_state(db);
    for (const auto& [table, dump] : expected) {
      BOOST_TEST_CONTEXT("table " << table) { BOOST_TEST(state.at(table) == dump, boost::test_tools::per_element()); }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_interrupted_step_leaves_nothing_behind) {
  TempDir dir;
  const std::string path = dir.file("healthhook.db");
  {
    auto db = test::open_store(path);
    test::append_deliveries(db, {test::sleep_delivery("a", "sleep-1", 1), test::sleep_delivery("b", "sleep-2", 2)});
    // What a step writes, cut off before COMMIT: the connection closes mid-transaction.
    auto p = make_processor(db);
    BOOST_REQUIRE(db.exec("BEGIN IMMEDIATE; INSERT INTO summaries (resource, id, source_type, seq, data) "
                          "VALUES ('sleep', 'half', 'unknown', 1, '{}'); "
                          "INSERT INTO delivery_outcomes (seq, status) VALUES (1, 'processed'); "
                          "UPDATE processor_state SET applied_seq = 1;"));
  }
  auto db = test::open_store(path);
  BOOST_TEST(value(db, "SELECT applied_seq FROM processor_state") == "0");
  BOOST_TEST(test::count(db, "summaries") == 0);
  auto p = make_processor(db);
  catch_up(*p);
  BOOST_TEST(rows(db, "SELECT id, seq FROM summaries ORDER BY id") == (Strings{"'sleep-1'|1", "'sleep-2'|2"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(one_processor_per_database_file) {
  TempDir dir;
  auto first_db = test::open_store(dir.file("healthhook.db"));
  auto second_db = test::open_store(dir.file("healthhook.db"));
  auto first = make_processor(first_db);
  auto second = test::sqlite_processor(second_db);
  BOOST_TEST(!second.ok());
  BOOST_TEST(second.error() == dir.file("healthhook.db") +
                                   " is being processed by another healthhook process (a running `serve`, `rebuild` "
                                   "or `replay`); stop it first");
  first.reset();
  BOOST_TEST(test::sqlite_processor(second_db).ok());
}

BOOST_AUTO_TEST_CASE(reset_derived_empties_every_derived_table_and_keeps_the_inbox_and_jobs) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  test::append_deliveries(db, test::make_corpus(300, 11));
  auto p = make_processor(db);
  catch_up(*p);
  const Strings jobs = test::dump_table(db, "jobs");
  BOOST_TEST(!jobs.empty());

  BOOST_REQUIRE(store::reset_derived(db, {}));
  // derived_tables() names every table of the schema but the inbox, its outcomes and
  // cursor, the record of removed bodies, jobs, the record of erasures, and the forwarding
  // outbox, the record of what its budget dropped and the paused destinations (what waits
  // to be sent stays through a rebuild; SQLite's sqlite_sequence numbers its ids).
  Strings derived(store::schema::derived_tables().begin(), store::schema::derived_tables().end());
  std::sort(derived.begin(), derived.end());
  Strings schema_tables;
  for (const auto& row : rows(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN "
                                  "('inbox', 'delivery_outcomes', 'processor_state', 'removed_bodies', 'jobs', 'erasures', "
                                  "'outbox', 'outbox_dropped', 'forward_pauses', 'sqlite_sequence') ORDER BY name")) {
    schema_tables.push_back(row.substr(1, row.size() - 2));
  }
  BOOST_TEST(derived == schema_tables, boost::test_tools::per_element());
  for (const auto& table : derived) BOOST_TEST(test::count(db, table) == 0, table);
  BOOST_TEST(value(db, "SELECT applied_seq FROM processor_state") == "0");
  BOOST_TEST(rows(db, "SELECT DISTINCT status, family, error FROM deliveries") == Strings{"'pending'|NULL|NULL"},
             boost::test_tools::per_element());
  BOOST_TEST(test::count(db, "delivery_outcomes") == 0);
  BOOST_TEST(test::count(db, "deliveries") == 300);
  BOOST_TEST(test::dump_table(db, "jobs") == jobs, boost::test_tools::per_element());

  // The same processor notices the reset (its cached series ids are gone) and re-applies.
  catch_up(*p);
  BOOST_TEST(p->applied_seq() == 300);
  BOOST_TEST(test::count(db, "samples s LEFT JOIN series USING (series_id) WHERE series.user_id IS NULL") == 0);
  BOOST_TEST(test::dump_table(db, "jobs") == jobs, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(catching_up_marks_a_delivery_the_store_rejects_and_goes_on) {
  TempDir dir;
  auto db = test::open_store(dir.file("healthhook.db"));
  BOOST_REQUIRE(db.exec("CREATE TRIGGER reject BEFORE INSERT ON summaries WHEN NEW.id = 'poison' "
                        "BEGIN SELECT RAISE(ABORT, 'rejected by a test trigger'); END"));
  std::vector<store::NewDelivery> inbox;
  for (int i = 0; i < 300; ++i) {
    inbox.push_back(test::sleep_delivery("m" + std::to_string(i), i == 123 ? "poison" : "s" + std::to_string(i % 5), i));
  }
  test::append_deliveries(db, inbox);
  // A backlog this long is read and parsed ahead on a thread; the step that meets the
  // rejected delivery is redone inline, then reading ahead resumes.
  auto p = make_processor(db, processor::ProcessorOptions{.max_rows_per_step = 100, .max_deliveries_per_step = 100});
  catch_up(*p);
  BOOST_TEST(p->applied_seq() == 300);
  BOOST_TEST(rows(db, "SELECT seq, status, error FROM deliveries WHERE status <> 'processed'") ==
                 Strings{"124|'invalid'|'summaries: rejected by a test trigger'"},
             boost::test_tools::per_element());
  BOOST_TEST(rows(db, "SELECT id, seq, json_extract(data, '$.score') FROM summaries ORDER BY id") ==
                 (Strings{"'s0'|296|295", "'s1'|297|296", "'s2'|298|297", "'s3'|299|298", "'s4'|300|299"}),
             boost::test_tools::per_element());
  BOOST_TEST(test::count(db, "changes") == 300);  // 299 summaries, 1 user
  BOOST_TEST(p->stats().steps == 3u);
}

BOOST_AUTO_TEST_SUITE_END()  // processor_test
