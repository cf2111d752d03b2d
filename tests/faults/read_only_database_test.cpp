// Fault: the database file, or its folder, is made read-only (issue 9).
//
// Before start-up: `serve` must refuse to start, with one line naming the file and exit
// status 1, rather than start, report ready and answer every delivery with 503.
// While running: commits fail; deliveries get 503 with Retry-After (the service retries
// them), nothing is half-written, /readyz says not ready; once the file is writable again
// the next delivery commits and the server is ready again, without a restart.
//
// How the file is made read-only: `chmod a-w` for a normal user; as root (CI containers)
// chmod changes nothing, so the immutable flag (tests/faults/immutable_files.h). While the
// server runs, only the immutable flag reaches the files it holds open: the case is skipped,
// with the reason, where the flag cannot be set.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "store/sqlite/connection.h"
#include "tests/faults/immutable_files.h"
#include "tests/faults/store_probe.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(read_only_database_test)

using namespace hh::test;

namespace {

const std::string kSteps =
    R"({"event_type":"daily.data.steps.created","data":{"data":[{"timestamp":"2024-05-16T10:00:00+00:00",)"
    R"("timezone_offset":0,"type":null,"unit":"count","value":237}],"source":{"provider":"oura","type":"ring"},)"
    R"("user_id":"u1"},"user_id":"u1"})";

// Read-only for whoever runs the tests: write permission removed for a normal user, the
// immutable flag for root. Undone in the destructor (the temporary folder must go).
class ReadOnly {
 public:
  // "" on success, else why it could not be done.
  std::string make(const std::string& path) {
    if (::geteuid() != 0) {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0 || ::chmod(path.c_str(), st.st_mode & ~mode_t{0222}) != 0) {
        return path + ": chmod failed";
      }
      modes_.emplace_back(path, st.st_mode);
      return {};
    }
    return immutable_.protect(path);
  }
  void undo() {
    for (auto it = modes_.rbegin(); it != modes_.rend(); ++it) ::chmod(it->first.c_str(), it->second);
    modes_.clear();
    immutable_.release();
  }
  ~ReadOnly() { undo(); }
  // make(), the test stopped if it could not be done.
  void require(const std::string& path) {
    const std::string made = make(path);
    BOOST_REQUIRE_MESSAGE(made.empty(), made);
  }

 private:
  std::vector<std::pair<std::string, mode_t>> modes_;
  ImmutableFiles immutable_;
};

// A database with one delivery in it, the server stopped; returns the config file.
std::string prepared_database(const TempDir& dir) {
  ServerProcess server(dir);
  HttpClient client(server.port());
  BOOST_REQUIRE(client.post_webhook(server.secret(), "msg_1", kSteps).status == 200);
  BOOST_REQUIRE(wait_until_processed(server.database(), std::chrono::seconds(30)).empty());
  BOOST_REQUIRE_EQUAL(server.stop(), 0);
  return server.config_file();
}

// A database with one delivery in it (prepared_database), made read-only; writable again
// when it goes, before its folder.
struct ReadOnlyDatabase {
  TempDir dir;
  std::string config = prepared_database(dir);
  std::string database = dir.file("healthhook.db");
  ReadOnly read_only;
  ReadOnlyDatabase() { read_only.require(database); }
};

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

boost::test_tools::assertion_result immutable_flag_usable(boost::unit_test::test_unit_id) {
  TempDir probe;
  const std::string reason = immutable_flag_unavailable(probe.path().string());
  boost::test_tools::assertion_result result(reason.empty());
  result.message() << "skipped: the immutable flag is not usable here (" << reason
                   << "); as a normal user no permission change reaches files a running server holds open";
  return result;
}

// Before start, chmod does it for a normal user; root needs the immutable flag, which some
// file systems (overlayfs in CI containers, tmpfs) do not support.
boost::test_tools::assertion_result read_only_usable(boost::unit_test::test_unit_id id) {
  if (::geteuid() != 0) return true;
  return immutable_flag_usable(id);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_read_only_database_file_stops_start_up_with_one_line_naming_it,
                     *boost::unit_test::precondition(read_only_usable)) {
  ReadOnlyDatabase prepared;
  const std::string& config = prepared.config;
  const std::string& database = prepared.database;

  const auto refused = run_healthhook({"serve", "--config", config}, "", {}, std::chrono::seconds(20));
  BOOST_TEST(refused.exit_code == 1, refused.stderr_text);
  BOOST_TEST(lines(refused.stderr_text) == 1u, refused.stderr_text);
  BOOST_TEST(refused.stderr_text.find(database) != std::string::npos, refused.stderr_text);
  BOOST_TEST(refused.stderr_text.find("read-only") != std::string::npos, refused.stderr_text);

  // Writable again: starts, and the delivery from before is still there.
  prepared.read_only.undo();
  ServerProcess again(prepared.dir);
  BOOST_TEST(deliveries_where(database, "message_id = 'msg_1'") == 1);
  BOOST_TEST(again.stop() == 0);
}

// The admin commands (purge-user, jobs, forward) said "attempt to write a readonly
// database" alone, without the file or why (attack, stop 82). Their listings only read:
// they go on working on a read-only file (a refusal at open stopped them, stop 84).
BOOST_AUTO_TEST_CASE(an_admin_command_on_a_read_only_file_names_it,
                     *boost::unit_test::precondition(read_only_usable)) {
  ReadOnlyDatabase prepared;
  const std::string& config = prepared.config;
  const std::string& database = prepared.database;

  const auto listed = run_healthhook({"jobs", "--config", config}, "", {}, std::chrono::seconds(20));
  BOOST_TEST(listed.exit_code == 0, listed.stderr_text);
  const auto looked = run_healthhook({"purge-user", "u1", "--dry-run", "--config", config}, "", {},
                                     std::chrono::seconds(20));
  BOOST_TEST(looked.exit_code == 0, looked.stderr_text);

  const auto refused = run_healthhook({"purge-user", "u1", "--config", config}, "", {}, std::chrono::seconds(20));
  BOOST_TEST(refused.exit_code == 1, refused.stderr_text);
  BOOST_TEST(lines(refused.stderr_text) == 1u, refused.stderr_text);
  BOOST_TEST(refused.stderr_text.find(database + ": attempt to write a readonly database: healthhook must be able "
                                                 "to write the database file and the -wal and -shm files beside it") !=
                 std::string::npos,
             refused.stderr_text);
  prepared.read_only.undo();
  BOOST_TEST(deliveries_where(database, "message_id = 'msg_1'") == 1);  // nothing erased
}

BOOST_AUTO_TEST_CASE(a_read_only_folder_stops_start_up_with_one_line_naming_the_file,
                     *boost::unit_test::precondition(read_only_usable)) {
  TempDir dir;
  const std::string config = prepared_database(dir);
  const std::string database = dir.file("healthhook.db");
  ReadOnly read_only;
  read_only.require(dir.path().string());  // SQLite cannot create -wal and -shm

  const auto refused = run_healthhook({"serve", "--config", config}, "", {}, std::chrono::seconds(20));
  BOOST_TEST(refused.exit_code == 1, refused.stderr_text);
  BOOST_TEST(lines(refused.stderr_text) == 1u, refused.stderr_text);
  BOOST_TEST(refused.stderr_text.find(database) != std::string::npos, refused.stderr_text);
  BOOST_TEST(refused.stderr_text.find("its folder must be writable") != std::string::npos, refused.stderr_text);
}

// query and capture read the file, but SQLite writes a -shm file beside it even to read:
// in a folder this user may not write they said "unable to open database file (in: PRAGMA
// cache_size …)" alone; and capture --output into such a folder named only its .partial
// file (attack, finding 2).
BOOST_AUTO_TEST_CASE(query_and_capture_in_a_read_only_folder_say_which_file_and_why,
                     *boost::unit_test::precondition(read_only_usable)) {
  TempDir dir;
  const std::string config = prepared_database(dir);
  const std::string database = dir.file("healthhook.db");
  BOOST_REQUIRE(!std::filesystem::exists(database + "-shm"));  // a clean stop removed it
  TempDir out;
  const std::string output = out.file("deliveries.jsonl");
  ReadOnly read_only;
  for (const std::string& folder : {dir.path().string(), out.path().string()}) {
    read_only.require(folder);
  }

  const std::string why = database + ": the database cannot be read: its folder (or its -shm file) is not writable";
  for (const char* command : {"query", "capture"}) {
    std::vector<std::string> args{command};
    if (std::string(command) == "query") args.push_back("deliveries");
    args.insert(args.end(), {"--config", config});
    const auto refused = run_healthhook(args, "", {}, std::chrono::seconds(20));
    BOOST_TEST(refused.exit_code == 1, refused.stderr_text);
    BOOST_TEST(lines(refused.stderr_text) == 1u, refused.stderr_text);
    BOOST_TEST(refused.stderr_text.find(why) != std::string::npos, refused.stderr_text);
  }

  // The database readable again, the export's folder not: the export's path and why.
  read_only.undo();
  const std::string made = read_only.make(out.path().string());
  BOOST_REQUIRE_MESSAGE(made.empty(), made);
  const auto captured = run_healthhook({"capture", "--config", config, "--output", output}, "", {}, std::chrono::seconds(20));
  BOOST_TEST(captured.exit_code != 0, captured.stderr_text);
  BOOST_TEST(lines(captured.stderr_text) == 1u, captured.stderr_text);
  BOOST_TEST(captured.stderr_text.find(output + ": cannot write the export: its folder is not writable by this user") !=
                 std::string::npos,
             captured.stderr_text);
}

// The database locked by another program past commit_deadline_ms: the delivery gets 503
// and /readyz says why; once the lock is gone /readyz is ready again by itself, with no
// delivery to find out (a load balancer sends none to an instance its check calls not
// ready).
BOOST_AUTO_TEST_CASE(readiness_comes_back_when_a_held_lock_goes_without_a_delivery) {
  TempDir dir;
  ServerProcess server(dir, "commit_deadline_ms = 300");
  HttpClient client(server.port());
  BOOST_REQUIRE(client.post_webhook(server.secret(), "msg_before", kSteps).status == 200);
  auto holder = hh::sqlite::Connection::open(server.database(), hh::sqlite::OpenMode::read_write);
  BOOST_REQUIRE(holder.ok());
  holder->wait_when_busy(std::chrono::seconds(10));  // the server may be applying msg_before
  BOOST_REQUIRE(holder->exec("BEGIN IMMEDIATE").ok());
  BOOST_TEST(client.post_webhook(server.secret(), "msg_during", kSteps).status == 503);
  const auto not_ready = client.get("/readyz");
  BOOST_TEST(not_ready.status == 503);
  BOOST_TEST(not_ready.body.find("last inbox commit failed") != std::string::npos, not_ready.body);
  BOOST_REQUIRE(holder->exec("ROLLBACK").ok());
  bool ready = false;
  for (int i = 0; i < 150 && !ready; ++i) {  // bounded: 15 s
    ready = client.get("/readyz").status == 200;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  BOOST_TEST(ready);
  BOOST_TEST(deliveries_where(server.database()) == 1);  // the probe stored nothing
  BOOST_TEST(server.wait_for_log("\"event\":\"inbox_commit_recovered\"", std::chrono::seconds(5)));
}

// Deliveries that arrive while a commit waits on a lock held past commit_deadline_ms are
// answered 503 with it: they do not wait the same lock out again in a commit of their own
// (at twice the deadline, or request_deadline_ms first). One failed commit for all five.
BOOST_AUTO_TEST_CASE(deliveries_queued_behind_a_commit_failing_on_a_held_lock_are_answered_with_it) {
  TempDir dir;
  ServerProcess server(dir, "commit_deadline_ms = 2000\nrequest_deadline_ms = 14000");
  auto holder = hh::sqlite::Connection::open(server.database(), hh::sqlite::OpenMode::read_write);
  BOOST_REQUIRE(holder.ok());
  BOOST_REQUIRE(holder->exec("BEGIN IMMEDIATE").ok());
  std::vector<int> statuses(5, 0);
  std::vector<std::thread> senders;
  for (size_t i = 0; i < statuses.size(); ++i) {
    // The first is committing (waiting on the lock) when the others arrive.
    if (i == 1) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    senders.emplace_back([&, i] {
      HttpClient client(server.port());
      statuses[i] = client.post_webhook(server.secret(), "msg_" + std::to_string(i), kSteps).status;
    });
  }
  for (auto& sender : senders) sender.join();
  for (const int status : statuses) BOOST_TEST(status == 503);
  HttpClient client(server.port());
  const std::string metrics = client.get("/metrics").body;
  BOOST_TEST(metrics.find("healthhook_inbox_commits_total{result=\"failed\"} 1\n") != std::string::npos, metrics);
  BOOST_REQUIRE(holder->exec("ROLLBACK").ok());
  BOOST_TEST(client.post_webhook(server.secret(), "msg_after", kSteps).status == 200);
}

BOOST_AUTO_TEST_CASE(read_only_while_running_answers_503_until_writable_again,
                     *boost::unit_test::precondition(immutable_flag_usable)) {
  TempDir dir;
  ServerProcess server(dir, "retry_after_s = 7");
  HttpClient client(server.port());
  BOOST_REQUIRE(client.post_webhook(server.secret(), "msg_before", kSteps).status == 200);
  BOOST_REQUIRE(client.get("/readyz").status == 200);

  ImmutableFiles frozen;
  for (const std::string& file : {server.database(), server.database() + "-wal"}) {
    const std::string error = frozen.protect(file);
    BOOST_REQUIRE_MESSAGE(error.empty(), error);
  }

  const auto refused = client.post_webhook(server.secret(), "msg_during", kSteps);
  BOOST_TEST(refused.status == 503);
  BOOST_TEST(refused.header("retry-after") == "7");
  BOOST_TEST(refused.body.find("inbox cannot commit") != std::string::npos, refused.body);
  const auto ready = client.get("/readyz");
  BOOST_TEST(ready.status == 503);
  BOOST_TEST(ready.body.find("last inbox commit failed") != std::string::npos, ready.body);
  BOOST_TEST(client.get("/healthz").status == 200);
  BOOST_TEST(server.wait_for_log("\"event\":\"inbox_commit_failed\"", std::chrono::seconds(5)));
  for (const auto& line : server.log_lines()) {
    if (line.find("inbox_commit_failed") != std::string::npos) BOOST_TEST_MESSAGE("server log: " << line);
  }
  BOOST_TEST(deliveries_where(server.database(), "message_id = 'msg_during'") == 0);

  // Writable again: the service's retry is stored, once, and the server is ready again.
  frozen.release();
  const auto retried = client.post_webhook(server.secret(), "msg_during", kSteps);
  BOOST_TEST(retried.status == 200);
  BOOST_TEST(retried.body.find("\"status\":\"stored\"") != std::string::npos, retried.body);
  BOOST_TEST(client.get("/readyz").status == 200);
  BOOST_TEST(client.post_webhook(server.secret(), "msg_during", kSteps).body.find("duplicate") != std::string::npos);
  BOOST_TEST(deliveries_where(server.database()) == 2);
  const std::string lag = wait_until_processed(server.database(), std::chrono::seconds(60));
  BOOST_TEST(lag.empty(), lag);
  BOOST_TEST(deliveries_where(server.database(), "status = 'processed'") == 2);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // read_only_database_test
