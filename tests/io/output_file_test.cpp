// Where exports go (replay/output_file.h): a regular file is made private; a device or a
// pipe is written as it is, its mode untouched (`capture -o /dev/null` run as root made
// /dev/null 0600 and then failed to sync it).
#include <boost/test/unit_test.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay/output_file.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(output_file_test)

namespace {

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

BOOST_AUTO_TEST_SUITE_END()  // output_file_test
