#include "common/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FileDescriptor> open_regular_file(const std::string& path, FileRefusal* why) {
  const auto refuse = [&](FileRefusal refusal, ErrorKind kind, std::string message) {
    if (why) *why = refusal;
    return fail(kind, path + ": " + message);
  };
  // O_NONBLOCK: opening a FIFO without a writer returns at once (and so does a device's
  // open that waits for a carrier); the type is known only from the open descriptor
  // (fstat), which also follows a symbolic link to what is read.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    if (errno == ENXIO) return refuse(FileRefusal::not_regular, ErrorKind::data, "not a regular file");  // a socket
    return refuse(FileRefusal::unreadable, ErrorKind::data, std::string("cannot read: ") + std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return refuse(FileRefusal::unreadable, ErrorKind::io, std::string("cannot read: ") + std::strerror(errno));
  }
  if (S_ISDIR(info.st_mode)) return refuse(FileRefusal::folder, ErrorKind::data, "is a folder, not a file");
  if (!S_ISREG(info.st_mode)) return refuse(FileRefusal::not_regular, ErrorKind::data, "not a regular file");
  // A regular file's reads do not honour O_NONBLOCK; cleared all the same, as plain reads expect.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Result<FilePrefix> read_regular_file_prefix(const std::string& path, size_t max_bytes, FileRefusal* why) {
  auto opened = open_regular_file(path, why);
  if (!opened) return fail(opened);
  FilePrefix prefix;
  char buffer[64 * 1024];
  // One byte past the bound tells whether the file goes on.
  while (prefix.text.size() <= max_bytes) {
    const ssize_t n = ::read(opened->get(), buffer, std::min(sizeof buffer, max_bytes + 1 - prefix.text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (why) *why = FileRefusal::unreadable;
      return fail(ErrorKind::io, path + ": cannot read: " + std::strerror(errno));
    }
    if (n == 0) return prefix;
    prefix.text.append(buffer, static_cast<size_t>(n));
  }
  prefix.text.resize(max_bytes);
  prefix.whole = false;
  return prefix;
}

Result<std::string> read_regular_file_text(const std::string& path, size_t max_bytes) {
  auto prefix = read_regular_file_prefix(path, max_bytes);
  if (!prefix) return fail(prefix);
  if (!prefix->whole) {
    return fail(ErrorKind::data, path + ": larger than " + std::to_string(max_bytes >> 20) + " MiB");
  }
  return std::move(prefix->text);
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
