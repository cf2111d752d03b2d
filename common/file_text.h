#pragma once
// A small file read whole (a certificate, a key, a configuration, a document to rewrite),
// with an error that names the file and says why: "PATH: cannot read: No such file or
// directory", "PATH: is a folder, not a file" (std::ifstream opens a folder and reads
// nothing), "PATH: larger than 4 MiB" (a device that never ends, /dev/zero, included).
#include <cstddef>
#include <fstream>
#include <istream>
#include <string>
#include <utility>

#include "common/result.h"

namespace hh {

Result<std::string> read_file_text(const std::string& path, size_t max_bytes = 4u << 20);

// An open file descriptor, closed when it goes.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) noexcept : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

// Why open_regular_file refused a path, for a caller that words it its own way (a secret's).
enum class FileRefusal { unreadable, folder, not_regular };

// `path` opened for reading (O_CLOEXEC) only when it is a regular file, through symbolic
// links: a FIFO, a socket or a device is refused at once ("PATH: not a regular file"), never
// waited on (a FIFO's open and read block until a writer comes), as is a folder ("PATH: is a
// folder, not a file"); else "PATH: cannot read: REASON". `why`, when given, gets which. For
// files a configuration names (secrets, tokens, TLS keys and certificates, the configuration
// itself on SIGHUP): what is read at start-up and on SIGHUP must not hang the reader.
Result<FileDescriptor> open_regular_file(const std::string& path, FileRefusal* why = nullptr);

// read_file_text for a file that must be regular (open_regular_file's errors).
Result<std::string> read_regular_file_text(const std::string& path, size_t max_bytes = 4u << 20);

// The first `max_bytes` of a regular file, and whether that was all of it: for a file whose
// meaning is in its first lines (a secret), read once, whatever its size.
struct FilePrefix {
  std::string text;
  bool whole = true;  // false: the file goes on past `text`
};
Result<FilePrefix> read_regular_file_prefix(const std::string& path, size_t max_bytes, FileRefusal* why = nullptr);

// The file opened for reading, or the same errors as read_file_text ("PATH: is a folder, not
// a file", "PATH: cannot read: REASON"), for a reader that goes line by line.
Result<std::ifstream> open_text_file(const std::string& path);

// std::getline with a bound: the next line of `in` (without its '\n') into `line`. A line
// longer than `max_bytes` is not kept whole (`too_long`; what follows it is left unread):
// a file of one line that never ends (/dev/zero) is refused at the bound, not read into
// memory until it runs out.
enum class LineRead { line, too_long, end };
LineRead getline_within(std::istream& in, std::string& line, size_t max_bytes);

}  // namespace hh
