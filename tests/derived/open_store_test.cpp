// The store factory (store/open_store.h): which backend `database = …` names, and what an
// open store hands out.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "store/open_store.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(open_store_test)

using namespace hh;
using hh::test::TempDir;

BOOST_AUTO_TEST_CASE(a_postgresql_uri_opens_postgresql_and_a_server_not_there_is_a_clear_error) {
  TempDir nowhere;  // no server listens in this folder
  auto opened = store::open_store("postgresql:///healthhook?host=" + nowhere.path().string() + "&port=5", {});
  BOOST_TEST(!opened.ok());
  BOOST_TEST((opened.error_kind() == ErrorKind::unavailable));
  BOOST_TEST(opened.error().starts_with("PostgreSQL: cannot connect: "), opened.error());
}

BOOST_AUTO_TEST_CASE(an_unknown_scheme_is_refused_with_a_clear_error) {
  auto opened = store::open_store("mysql://localhost/healthhook", {});
  BOOST_TEST(!opened.ok());
  BOOST_TEST((opened.error_kind() == ErrorKind::unavailable));
  BOOST_TEST(opened.error() ==
             "database: unknown scheme \"mysql://\" (expected a SQLite file path or a postgresql:// URI)");
  BOOST_TEST(!store::open_job_admin("mysql://localhost/healthhook").ok());
}

BOOST_AUTO_TEST_CASE(a_file_path_opens_sqlite_and_hands_out_the_write_side) {
  TempDir dir;
  auto opened = store::open_store(dir.file("healthhook.db"), {});
  BOOST_REQUIRE_MESSAGE(opened, opened.error());
  store::Store& s = **opened;
  BOOST_TEST(s.local_folder() == std::filesystem::path(dir.file("healthhook.db")).parent_path().string());
  auto inbox = s.open_inbox();
  BOOST_REQUIRE_MESSAGE(inbox, inbox.error());
  BOOST_TEST((*inbox)->last_seq() == 0);
  auto jobs = s.open_job_queue();
  BOOST_REQUIRE_MESSAGE(jobs, jobs.error());
  auto processing = s.open_processing();
  BOOST_REQUIRE_MESSAGE(processing, processing.error());
  BOOST_TEST((*processing)->applied_seq().value() == 0);
  // The processing lock: one per database file, across stores and processes.
  auto second = store::open_store(dir.file("healthhook.db"), {});
  BOOST_REQUIRE_MESSAGE(second, second.error());
  BOOST_TEST(!(*second)->open_processing().ok());
  auto admin = store::open_job_admin(dir.file("healthhook.db"));
  BOOST_REQUIRE_MESSAGE(admin, admin.error());
  BOOST_TEST((*admin)->list(std::nullopt).value().empty());
}

BOOST_AUTO_TEST_SUITE_END()  // open_store_test
