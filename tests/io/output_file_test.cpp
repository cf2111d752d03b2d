// Where exports go (replay/output_file.h): a regular file is made private; a device or a
// pipe is written as it is, its mode untouched (`capture -o /dev/null` run as root made
// /dev/null 0600 and then failed to sync it).
#include <boost/test/unit_test.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "replay/output_file.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(output_file_test)

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

mode_t mode_of(const std::string& path) {
  struct stat info {};
  BOOST_REQUIRE(::stat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_existing_regular_file_is_made_private) {
  hh::test::TempDir dir;
  const std::string path = dir.write("out.jsonl", "old\n");
  BOOST_REQUIRE(::chmod(path.c_str(), 0644) == 0);
  auto out = hh::replay::OutputFile::open(path);
  BOOST_REQUIRE(out.ok());
  out->buffer() = "row\n";
  BOOST_TEST(out->close().ok());
  BOOST_TEST(mode_of(path) == 0600u);
}

BOOST_AUTO_TEST_CASE(a_fifo_keeps_its_mode_and_is_written) {
  hh::test::TempDir dir;
  const std::string path = dir.file("pipe");
  BOOST_REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
  const int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);  // so that the writer's open returns
  BOOST_REQUIRE(reader >= 0);
  auto out = hh::replay::OutputFile::open(path);
  BOOST_REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error()));
  out->buffer() = "row\n";
  const auto closed = out->close();
  BOOST_TEST(closed.ok(), (closed.ok() ? "" : closed.error()));
  char got[8] = {};
  BOOST_TEST(::read(reader, got, sizeof got) == 4);
  ::close(reader);
  BOOST_TEST(mode_of(path) == 0644u);
}

// /dev/stdout when the output is a pipe: a link to /proc/self/fd/1, which leads to
// "pipe:[…]", no path. It is written as it is (it was refused as "a symbolic link that
// leads nowhere"). Here a pipe's write end through its /proc/self/fd link.
BOOST_AUTO_TEST_CASE(a_pipe_through_a_proc_fd_link_is_written) {
  int ends[2];
  BOOST_REQUIRE(::pipe(ends) == 0);
  const std::string link = "/proc/self/fd/" + std::to_string(ends[1]);
  auto out = hh::replay::OutputFile::open(link);
  BOOST_REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error()));
  out->buffer() = "row\n";
  const auto closed = out->close();
  BOOST_TEST(closed.ok(), (closed.ok() ? "" : closed.error()));
  ::close(ends[1]);
  char got[8] = {};
  BOOST_TEST(::read(ends[0], got, sizeof got) == 4);
  ::close(ends[0]);
}

// /dev/stdout is stdout itself, whatever it is: a file opened for appending was replaced
// through FILE.partial (and made 0600), a socket refused (attack on the pipe fix above).
BOOST_AUTO_TEST_CASE(dev_stdout_is_written_where_stdout_is) {
  hh::test::TempDir dir;
  const std::string link = dir.file("to-stderr");
  BOOST_REQUIRE(::symlink("/dev/stderr", link.c_str()) == 0);
  // Where the runner sends both to one pipe, stderr's file is stdout's.
  struct stat out_file {}, err_file {};
  BOOST_REQUIRE(::fstat(STDOUT_FILENO, &out_file) == 0 && ::fstat(STDERR_FILENO, &err_file) == 0);
  const std::string err = out_file.st_dev == err_file.st_dev && out_file.st_ino == err_file.st_ino ? "<stdout>" : "<stderr>";
  for (const auto& [path, name] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/stdout", "<stdout>"}, {"/proc/self/fd/1", "<stdout>"}, {"/dev/fd/1", "<stdout>"}, {"-", "<stdout>"},
           {"/dev/stderr", err}, {"/dev/fd/2", err}, {link, err}}) {
    auto out = hh::replay::OutputFile::open(path);
    BOOST_REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error()));
    BOOST_TEST(out->name() == name, path);
  }
}

// An export is written beside its name and takes it only when whole: until close() the
// old file is untouched and FILE.partial holds the rows; an export that fails (never
// closed) leaves neither a .partial nor a change. A capture killed half-way once left a
// file cut mid-line under the name asked for.
BOOST_AUTO_TEST_CASE(a_file_takes_its_name_only_when_whole) {
  hh::test::TempDir dir;
  const std::string path = dir.write("out.jsonl", "old\n");
  {
    auto out = hh::replay::OutputFile::open(path);
    BOOST_REQUIRE(out.ok());
    out->buffer() = "row 1\n";
    BOOST_REQUIRE(out->flush().ok());
    BOOST_TEST(read_all(path) == "old\n");
    BOOST_TEST(read_all(path + ".partial") == "row 1\n");
    BOOST_TEST(mode_of(path + ".partial") == 0600u);
    out->buffer() = "row 2\n";
    BOOST_TEST(out->close().ok());
  }
  BOOST_TEST(read_all(path) == "row 1\nrow 2\n");
  BOOST_TEST(::access((path + ".partial").c_str(), F_OK) != 0);
  {
    auto failed = hh::replay::OutputFile::open(path);
    BOOST_REQUIRE(failed.ok());
    failed->buffer() = "half\n";
    BOOST_REQUIRE(failed->flush().ok());
  }  // not closed
  BOOST_TEST(read_all(path) == "row 1\nrow 2\n");
  BOOST_TEST(::access((path + ".partial").c_str(), F_OK) != 0);
  // A new file, in a folder given as a relative path too.
  auto fresh = hh::replay::OutputFile::open(dir.file("new.jsonl"));
  BOOST_REQUIRE(fresh.ok());
  fresh->buffer() = "x\n";
  BOOST_TEST(fresh->close().ok());
  BOOST_TEST(read_all(dir.file("new.jsonl")) == "x\n");
  BOOST_TEST(mode_of(dir.file("new.jsonl")) == 0600u);
  // A folder is refused, naming it.
  auto folder = hh::replay::OutputFile::open(dir.path());
  BOOST_REQUIRE(!folder.ok());
  BOOST_TEST(folder.error().find("it is a folder") != std::string::npos, folder.error());
}

// Found by an attack on the .partial: a link planted at FILE.partial made the export write
// through it (the file it led to overwritten and made 0600, FILE a link to it); two exports
// to one name at once truncated each other's .partial, and one reported success with an
// empty or mixed FILE; and a link at FILE was written through with its target's mode kept.
BOOST_AUTO_TEST_CASE(a_partial_is_never_written_through_a_link_nor_shared) {
  hh::test::TempDir dir;
  const std::string victim = dir.write("victim.txt", "precious\n");
  BOOST_REQUIRE(::chmod(victim.c_str(), 0644) == 0);
  const std::string path = dir.file("out.jsonl");
  BOOST_REQUIRE(::symlink(victim.c_str(), (path + ".partial").c_str()) == 0);
  auto planted = hh::replay::OutputFile::open(path);
  BOOST_REQUIRE(!planted.ok());
  BOOST_TEST(planted.error().find("a symbolic link") != std::string::npos, planted.error());
  BOOST_TEST(read_all(victim) == "precious\n");
  BOOST_TEST(mode_of(victim) == 0644u);
  BOOST_REQUIRE(::unlink((path + ".partial").c_str()) == 0);

  // Two at once: the second is refused while the first writes; the first ends whole.
  auto first = hh::replay::OutputFile::open(path);
  BOOST_REQUIRE(first.ok());
  first->buffer() = "first\n";
  BOOST_REQUIRE(first->flush().ok());
  auto second = hh::replay::OutputFile::open(path);
  BOOST_REQUIRE(!second.ok());
  BOOST_TEST(second.error().find("another export is writing it") != std::string::npos, second.error());
  BOOST_TEST(first->close().ok());
  BOOST_TEST(read_all(path) == "first\n");

  // A link at FILE: the file it leads to takes the export, made private; the link stays.
  const std::string target = dir.write("target.jsonl", "old\n");
  BOOST_REQUIRE(::chmod(target.c_str(), 0644) == 0);
  const std::string link = dir.file("link.jsonl");
  BOOST_REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  auto through = hh::replay::OutputFile::open(link);
  BOOST_REQUIRE(through.ok());
  through->buffer() = "new\n";
  BOOST_TEST(through->close().ok());
  BOOST_TEST(read_all(target) == "new\n");
  BOOST_TEST(mode_of(target) == 0600u);
  struct stat info {};
  BOOST_REQUIRE(::lstat(link.c_str(), &info) == 0);
  BOOST_TEST(S_ISLNK(info.st_mode));

  // A folder where the .partial goes: refused, naming it.
  std::filesystem::create_directory(dir.file("taken.jsonl.partial"));
  auto blocked = hh::replay::OutputFile::open(dir.file("taken.jsonl"));
  BOOST_REQUIRE(!blocked.ok());
  BOOST_TEST(blocked.error().find("taken.jsonl.partial") != std::string::npos, blocked.error());
}

BOOST_AUTO_TEST_SUITE_END()  // output_file_test
