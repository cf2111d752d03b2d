// Fault: the database file, or the lock file beside it, belongs to another user: `serve`
// was run once as root (it creates both 0600), then every command runs as the service's
// user. Each command said "cannot open database x.db: unable to open database file", or
// "cannot open x.db-processor.lock: Permission denied", naming neither the owner nor the
// cause (black-box pass). Now one line names the file, what this user may not do with it,
// its owner and mode (store/sqlite/file_access.h), as docs/troubleshooting.md quotes it.
//
// How the file becomes another user's: as root (CI containers) chmod takes nothing from
// root, so the commands run as another uid (setpriv); as a normal user, chmod 000. The
// cases are skipped, with the reason, when root cannot switch ids here.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "store/sqlite/file_access.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(other_users_files_test)

using namespace hh::test;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kOtherUser = 54321;  // no account needed: setpriv sets the ids alone
const std::string kAsOtherUser = "setpriv --reuid=54321 --regid=54321 --clear-groups ";

bool root() { return ::geteuid() == 0; }

struct Ran {
  int exit_code;
  std::string stderr_text;
};

// `command` in `dir` through the shell: its exit status and its stderr.
Ran shell(const std::string& dir, const std::string& command) {
  FILE* pipe = ::popen(("cd '" + dir + "' && " + command + " 2>&1 >/dev/null").c_str(), "r");
  BOOST_REQUIRE(pipe);
  std::string err;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) err.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), err};
}

boost::test_tools::assertion_result other_user_usable(boost::unit_test::test_unit_id) {
  if (!root()) return true;  // chmod 000 does it
  TempDir probe;
  const bool switched = shell(probe.path().string(), kAsOtherUser + "true").exit_code == 0;
  boost::test_tools::assertion_result result(switched);
  result.message() << "skipped: running as root, and `" << kAsOtherUser
                   << "true` fails here (no setpriv, or no CAP_SETUID): chmod cannot keep root from a file";
  return result;
}

// A folder every user may enter and write, with a stopped store in it (healthhook.db, 0600,
// and its lock file, both this user's), the binary (its build folder may be closed to
// others) and a signing secret `secret` the other user may read.
struct StoreFolder {
  TempDir dir;
  std::string database = dir.file("healthhook.db");
  std::string lock = database + "-processor.lock";

  StoreFolder() {
    fs::permissions(dir.path(), fs::perms::all);
    {
      ServerProcess server(dir);
      BOOST_REQUIRE_EQUAL(server.stop(), 0);
    }
    BOOST_REQUIRE(fs::exists(database) && fs::exists(lock));
    fs::copy_file(healthhook_binary(), dir.file("healthhook"));
    dir.write("secret", random_secret() + "\n");
    if (root()) BOOST_REQUIRE(::chown(dir.file("secret").c_str(), kOtherUser, kOtherUser) == 0);
  }

  // `healthhook args… --database healthhook.db`, as the other user (root) or as this one.
  Ran run(const std::vector<std::string>& args) const {
    std::string command = "ASAN_OPTIONS=detect_leaks=0 timeout -s KILL 60 " + (root() ? kAsOtherUser : "") + "./healthhook";
    for (const std::string& arg : args) command += " " + arg;
    return shell(dir.path().string(), command + " --database healthhook.db");
  }
};

const std::vector<std::vector<std::string>> kServe = {
    {"serve", "--listen", "127.0.0.1:53600", "--set", "signing_secret_files=secret"}};

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// Each command refused with exit 1 and one line holding `expected`, the file's owner and
// mode after it (root's file, when the other user runs them).
void each_refused(const StoreFolder& store, const std::vector<std::vector<std::string>>& commands,
                  const std::string& expected) {
  for (const auto& command : commands) {
    BOOST_TEST_CONTEXT(command[0]) {
      const Ran refused = store.run(command);
      BOOST_TEST(refused.exit_code == 1, refused.stderr_text);
      BOOST_TEST(lines(refused.stderr_text) == 1u, refused.stderr_text);
      BOOST_TEST(refused.stderr_text.find(expected) != std::string::npos, refused.stderr_text);
      BOOST_TEST(refused.stderr_text.find(", mode 0") != std::string::npos, refused.stderr_text);
      if (root()) BOOST_TEST(refused.stderr_text.find("owner root, mode 0600)") != std::string::npos, refused.stderr_text);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_command_names_a_database_file_this_user_may_not_read,
                     *boost::unit_test::precondition(other_user_usable)) {
  StoreFolder store;
  if (!root()) fs::permissions(store.database, fs::perms::none);

  const std::string expected = "healthhook.db: " + std::string(hh::sqlite::kMayNotRead) +
                               std::string(hh::sqlite::kDatabaseFile) + " (Permission denied; owner ";
  std::vector<std::vector<std::string>> commands = kServe;
  commands.insert(commands.end(), {{"query", "users"}, {"jobs"}, {"rebuild"}, {"purge-user", "u1"}, {"capture"}});
  each_refused(store, commands, expected);
  if (!root()) fs::permissions(store.database, fs::perms::owner_read | fs::perms::owner_write);
}

// The database is the other user's now (chown, as an operator mends it), but the lock file
// `serve` left as root is not: every command that takes the processing lock names it.
BOOST_AUTO_TEST_CASE(a_lock_file_this_user_may_not_write_is_named_with_its_owner,
                     *boost::unit_test::precondition(other_user_usable)) {
  StoreFolder store;
  if (root()) {
    for (const auto& entry : fs::directory_iterator(store.dir.path())) {
      if (entry.path() != store.lock) BOOST_REQUIRE(::chown(entry.path().c_str(), kOtherUser, kOtherUser) == 0);
    }
  } else {
    fs::permissions(store.lock, fs::perms::none);
  }

  const std::string expected = "healthhook.db-processor.lock: " + std::string(hh::sqlite::kMayNotReadWrite) +
                               std::string(hh::sqlite::kLockFile) + " (Permission denied; owner ";
  std::vector<std::vector<std::string>> commands = kServe;
  commands.insert(commands.end(), {{"rebuild"}, {"purge-user", "u1"}});
  each_refused(store, commands, expected);
  // The lock file the other user's too: the store is theirs again, and the same commands work.
  if (root()) {
    BOOST_REQUIRE(::chown(store.lock.c_str(), kOtherUser, kOtherUser) == 0);
  } else {
    fs::permissions(store.lock, fs::perms::owner_read | fs::perms::owner_write);
  }
  const Ran listed = store.run({"jobs"});
  BOOST_TEST(listed.exit_code == 0, listed.stderr_text);
  const Ran purged = store.run({"purge-user", "u1"});
  BOOST_TEST(purged.exit_code == 0, purged.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()  // other_users_files_test
