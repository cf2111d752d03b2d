// check-config (and serve, which loads secrets the same way: config/secrets.cpp) on a
// secret file it cannot read. A name with a blank at either end ("secret, secret2" from
// --set, a space inside the quotes) was called "a secret itself, not the name of a file"
// and not shown, since any blank counted as a secret's; a missing or unreadable file was
// named without why (black-box pass). Now the name is shown quoted with what is wrong with
// it, unless the rest looks like a secret (then its place in the list), and every such
// error ends with the reason, as the configuration file's own errors do.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(check_config_secret_files_test)

using namespace hh::test;

namespace {

// A configuration in `dir` whose signing_secret_files the tests give with --set.
std::string write_config(const TempDir& dir) {
  dir.write("secret", random_secret() + "\n");
  dir.write("secret2", random_secret() + "\n");
  return dir.write("healthhook.toml", "listen = \"" + unserved_listen_address(29764) + "\"\ndatabase = \"" + dir.file("healthhook.db") +
                                          "\"\nsigning_secret_files = [\"secret\"]\n");
}

ProcessResult check_with_files(const std::string& config, const std::string& files) {
  return run_healthhook({"check-config", "--config", config, "--set", "signing_secret_files=" + files});
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_blank_at_an_end_of_a_file_name_is_said_with_the_name_quoted) {
  TempDir dir;
  const std::string config = write_config(dir);

  // A space after the comma: the second entry's name begins with it.
  const auto after_comma = check_with_files(config, "secret, secret2");
  BOOST_TEST(after_comma.exit_code == 2);
  BOOST_TEST(after_comma.stderr_text ==
                 "healthhook check-config: signing_secret_files: cannot read secret file \" secret2\": the name begins "
                 "with a blank, which a file name seldom does (a space after a comma, or inside the quotes?): " +
                     dir.file(" secret2") + ": No such file or directory\n",
             after_comma.stderr_text);
  BOOST_TEST(after_comma.stderr_text.find("looks like a secret") == std::string::npos, after_comma.stderr_text);

  // A space inside the quotes of the file, at the end.
  const std::string quoted_space = dir.write(
      "space.toml", "listen = \"" + unserved_listen_address(29764) + "\"\ndatabase = \"" + dir.file("healthhook.db") +
                        "\"\nsigning_secret_files = [\"secret \"]\n");
  const auto trailing = run_healthhook({"check-config", "--config", quoted_space});
  BOOST_TEST(trailing.exit_code == 2);
  BOOST_TEST(trailing.stderr_text.find("cannot read secret file \"secret \": the name ends with a blank") !=
                 std::string::npos,
             trailing.stderr_text);
  BOOST_TEST(trailing.stderr_text.find(": No such file or directory\n") != std::string::npos, trailing.stderr_text);

  // serve says the same, and does not start.
  const auto served = run_healthhook({"serve", "--config", quoted_space});
  BOOST_TEST(served.exit_code == 2, served.stderr_text);
  BOOST_TEST(served.stderr_text.find("cannot read secret file \"secret \": the name ends with a blank") !=
                 std::string::npos,
             served.stderr_text);

  // What is left looks like a secret: not shown, its place in the list named instead.
  const std::string pasted = random_secret();  // "whsec_…"
  const auto secret_like = check_with_files(config, "secret, " + pasted);
  BOOST_TEST(secret_like.exit_code == 2);
  BOOST_TEST(secret_like.stderr_text.find(pasted.substr(pasted.size() - 12)) == std::string::npos,
             secret_like.stderr_text);
  BOOST_TEST(secret_like.stderr_text.find("the value given as signing_secret_files[1] begins with a blank and, "
                                          "without it, looks like a secret itself") != std::string::npos,
             secret_like.stderr_text);

  // A name with a blank that is a file is read: a blank is unusual, not wrong.
  dir.write("secret 3", random_secret() + "\n");
  const auto with_blank = check_with_files(config, "secret 3");
  BOOST_TEST(with_blank.exit_code == 0, with_blank.stderr_text);
}

BOOST_AUTO_TEST_CASE(a_secret_file_that_cannot_be_read_is_said_with_the_reason) {
  TempDir dir;
  const std::string config = write_config(dir);

  const auto missing = check_with_files(config, "nosuchfile");
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(missing.stderr_text == "healthhook check-config: signing_secret_files: cannot read secret file " +
                                        dir.file("nosuchfile") + ": No such file or directory\n",
             missing.stderr_text);

  std::filesystem::create_symlink("loop2", dir.file("loop1"));
  std::filesystem::create_symlink("loop1", dir.file("loop2"));
  const auto looped = check_with_files(config, "loop1");
  BOOST_TEST(looped.exit_code == 2);
  BOOST_TEST(looped.stderr_text.find("cannot read secret file " + dir.file("loop1") +
                                     ": Too many levels of symbolic links\n") != std::string::npos,
             looped.stderr_text);

  // Not readable by this user (root reads it all the same: then there is nothing to see).
  const std::string locked = dir.write("locked", random_secret() + "\n");
  BOOST_REQUIRE(::chmod(locked.c_str(), 0) == 0);
  if (::access(locked.c_str(), R_OK) == 0) {
    BOOST_TEST_MESSAGE("SKIPPED the unreadable file: this user reads any file (root)");
    return;
  }
  const auto refused = check_with_files(config, "locked");
  BOOST_TEST(refused.exit_code == 2);
  BOOST_TEST(refused.stderr_text.find("cannot read secret file " + locked + ": Permission denied\n") !=
                 std::string::npos,
             refused.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()  // check_config_secret_files_test
