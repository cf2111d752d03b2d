#include "common/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace hh {

Result<std::ifstream> open_text_file(const std::string& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    return fail(ErrorKind::data, path + ": is a folder, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorKind::data, path + ": cannot read: " + std::strerror(errno));
  return in;
}

Result<std::string> read_file_text(const std::string& path, size_t max_bytes) {
  auto opened = open_text_file(path);
  if (!opened) return fail(opened);
  std::ifstream& in = *opened;
  std::string text;
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return fail(ErrorKind::data, path + ": larger than " + std::to_string(max_bytes >> 20) + " MiB");
    }
  }
  if (in.bad()) return fail(ErrorKind::io, path + ": cannot read: " + std::strerror(errno));
  return text;
}

Result<int> open_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO without a writer returns at once (and so does a device's
  // open that waits for a carrier); the type is known only from the open descriptor
  // (fstat), which also follows a symbolic link to what is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENXIO) return fail(ErrorKind::data, path + ": not a regular file");  // a Unix socket
    return fail(ErrorKind::data, path + ": cannot read: " + std::strerror(errno));
  }
  struct stat info {};
  const bool stated = ::fstat(fd, &info) == 0;
  const int error = errno;
  if (!stated || !S_ISREG(info.st_mode)) {
    ::close(fd);
    if (!stated) return fail(ErrorKind::io, path + ": cannot read: " + std::strerror(error));
    if (S_ISDIR(info.st_mode)) return fail(ErrorKind::data, path + ": is a folder, not a file");
    return fail(ErrorKind::data, path + ": not a regular file");
  }
  // A regular file's reads do not honour O_NONBLOCK; cleared all the same, as plain reads expect.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Result<std::string> read_regular_file_text(const std::string& path, size_t max_bytes) {
  auto opened = open_regular_file(path);
  if (!opened) return fail(opened);
  const int fd = *opened;
  std::string text;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return fail(ErrorKind::io, path + ": cannot read: " + std::strerror(error));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      return fail(ErrorKind::data, path + ": larger than " + std::to_string(max_bytes >> 20) + " MiB");
    }
  }
  ::close(fd);
  return text;
}

LineRead getline_within(std::istream& in, std::string& line, size_t max_bytes) {
  line.clear();
  std::streambuf* buffer = in.rdbuf();
  for (;;) {
    const int c = buffer ? buffer->sbumpc() : std::char_traits<char>::eof();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return line.empty() ? LineRead::end : LineRead::line;
    }
    if (c == '\n') return LineRead::line;
    if (line.size() == max_bytes) return LineRead::too_long;
    line.push_back(static_cast<char>(c));
  }
}

}  // namespace hh
