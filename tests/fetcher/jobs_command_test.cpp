// `healthhook jobs` as a process: list (table, jsonl, --state), show, requeue ID and
// --all-dead, the exit codes, and re-queueing while `serve` holds the database.
#include <boost/test/unit_test.hpp>

#include "store/sqlite/database.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(jobs_command_test)

using namespace hh;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A database with three jobs: 1 queued stream, 2 dead backfill, 3 running stream.
struct JobsDb {
  test::TempDir dir;
  std::string path = dir.file("healthhook.db");

  JobsDb() {
    auto db = store::open_for_writing(path, {});
    BOOST_REQUIRE_MESSAGE(db.ok(), db.error());
    BOOST_REQUIRE(db->exec(R"sql(
      INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload, created_at, updated_at)
      VALUES ('workout_stream', 'w-1', 'queued', 0, 1717200000000, NULL, 4,
              '{"workout_id":"w-1","user_id":"u-1","provider":"garmin"}', 1717200000000, 1717200000000),
             ('backfill', 'u-1/heartrate/garmin/1/2', 'dead', 8, 1717200000000, 'HTTP 404: {"detail":"Not Found"}', 5,
              '{"user_id":"u-1","resource":"heartrate","provider":"garmin","start":"2024-08-04T00:00:00.000Z","end":"2024-08-05T00:00:00.000Z","page":2,"cursor":"c2"}',
              1717200000000, 1717200000000),
             ('workout_stream', 'w-3', 'running', 1, 1717200000000, NULL, 6,
              '{"workout_id":"w-3"}', 1717200000000, 1717200000000);
    )sql").ok());
  }
  test::ProcessResult jobs(std::vector<std::string> args) {
    args.insert(args.begin(), "jobs");
    args.push_back("--database");
    args.push_back(path);
    return test::run_healthhook(args);
  }
  store::JobRow row(int64_t id) {
    auto db = store::open_admin_connection(path);
    BOOST_REQUIRE(db.ok());
    return store::find_job(*db, id).value().value();
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(lists_jobs_as_a_table) {
  JobsDb t;
  const auto result = t.jobs({});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.stdout_text.starts_with("ID      KIND            STATE    ATTEMPTS NEXT ATTEMPT (UTC)"));
  BOOST_TEST(contains(result.stdout_text, "\n1       workout_stream  queued   0        2024-06-01T00:00:00.000Z"));
  BOOST_TEST(contains(result.stdout_text, "HTTP 404: {\"detail\":\"Not Found\"}"));
  BOOST_TEST(std::count(result.stdout_text.begin(), result.stdout_text.end(), '\n') == 4);
}

BOOST_AUTO_TEST_CASE(filters_by_state_and_writes_json_lines) {
  JobsDb t;
  const auto result = t.jobs({"--state", "dead", "--format", "jsonl"});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.stdout_text ==
             R"({"job_id":2,"kind":"backfill","job_key":"u-1/heartrate/garmin/1/2","state":"dead","attempts":8,)"
             R"("next_attempt_at":"2024-06-01T00:00:00.000Z","last_error":"HTTP 404: {\"detail\":\"Not Found\"}",)"
             R"("trigger_seq":5,"payload":{"user_id":"u-1","resource":"heartrate","provider":"garmin",)"
             R"("start":"2024-08-04T00:00:00.000Z","end":"2024-08-05T00:00:00.000Z","page":2,"cursor":"c2"},)"
             R"("created_at":"2024-06-01T00:00:00.000Z","updated_at":"2024-06-01T00:00:00.000Z"})"
             "\n");
  BOOST_TEST(t.jobs({"--state", "sleeping"}).exit_code == 2);
}

BOOST_AUTO_TEST_CASE(shows_one_job) {
  JobsDb t;
  auto result = t.jobs({"show", "2"});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(contains(result.stdout_text, "state:           dead\n"));
  BOOST_TEST(contains(result.stdout_text, "last_error:      HTTP 404: {\"detail\":\"Not Found\"}\n"));
  BOOST_TEST(contains(result.stdout_text, "\"cursor\":\"c2\""));
  result = t.jobs({"show", "1", "--format", "jsonl"});
  BOOST_TEST(result.stdout_text.starts_with(R"({"job_id":1,"kind":"workout_stream","job_key":"w-1","state":"queued",)"));
  result = t.jobs({"show", "99"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text == "healthhook jobs show: no job 99\n");
  // An id past int64 is refused, not clamped to the largest one.
  for (const char* bad : {"99999999999999999999", "0", "-5", "7x"}) {
    result = t.jobs({"show", bad});
    BOOST_TEST(result.exit_code == 2, bad);
    BOOST_TEST(result.stderr_text.find("a job id is a whole number from 1") != std::string::npos, result.stderr_text);
  }
}

BOOST_AUTO_TEST_CASE(requeues_one_job_or_every_dead_one) {
  JobsDb t;
  auto result = t.jobs({"requeue", "2"});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.stdout_text == "requeued job 2\n");
  auto row = t.row(2);
  BOOST_TEST(row.state == "queued");
  BOOST_TEST(row.attempts == 0);
  BOOST_TEST(contains(row.payload, "\"cursor\":\"c2\""));  // a dead backfill continues where it stopped

  result = t.jobs({"requeue", "3"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stderr_text == "healthhook jobs requeue: job 3 is running; not re-queued\n");
  BOOST_TEST(t.row(3).state == "running");
  BOOST_TEST(t.jobs({"requeue", "42"}).exit_code == 1);
  BOOST_TEST(t.jobs({"requeue"}).exit_code == 2);
  BOOST_TEST(t.jobs({"requeue", "2", "--all-dead"}).exit_code == 2);

  result = t.jobs({"requeue", "--all-dead"});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.stdout_text == "requeued 0 dead jobs\n");
}

BOOST_AUTO_TEST_CASE(a_missing_database_is_an_error_not_a_new_file) {
  test::TempDir dir;
  const auto result = test::run_healthhook({"jobs", "--database", dir.file("nothing.db")});
  BOOST_TEST(result.exit_code == 2);  // as query, capture and rebuild: a mistake in the command
  BOOST_TEST(contains(result.stderr_text, "does not exist"));
  BOOST_TEST(!std::filesystem::exists(dir.file("nothing.db")));
}

BOOST_AUTO_TEST_CASE(requeues_while_serve_holds_the_database) {
  test::TempDir dir;
  test::ServerProcess server(dir);
  {
    auto db = store::open_admin_connection(server.database());
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(db->exec("INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, "
                           "created_at, updated_at) VALUES ('workout_stream', 'w', 'dead', 8, 0, 1, "
                           "'{\"workout_id\":\"w\"}', 0, 0)").ok());
  }
  const auto result = test::run_healthhook({"jobs", "requeue", "--all-dead", "--database", server.database()});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.stdout_text == "requeued 1 dead job\n");
  const auto listed = test::run_healthhook({"jobs", "--state", "queued", "--database", server.database()});
  BOOST_TEST(contains(listed.stdout_text, "workout_stream  queued"));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // jobs_command_test
