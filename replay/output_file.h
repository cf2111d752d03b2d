#pragma once
// Buffered output for exports (capture files, `healthhook query` rows): callers append
// to buffer() and call flush_if_full() per row; the buffer is written when it passes
// 1 MiB, so memory stays flat for any number of rows. Errors (disk full, closed pipe)
// come back as values naming the file.
//
// A file is created with mode 0600 (an existing regular file is made 0600): exports hold
// health data. A device or a FIFO is written as it is. "-" is standard output.
// Used by one thread.
#include <string>

#include "common/result.h"

namespace hh::replay {

class OutputFile {
 public:
  static Result<OutputFile> open(const std::string& path);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();  // closes without reporting errors: call close() to see them

  std::string& buffer() { return buffer_; }
  Result<void> flush_if_full() { return buffer_.size() >= kFlushBytes ? flush() : Result<void>{}; }
  Result<void> flush();
  // Flushes and closes; a file's data is synced to disk first.
  Result<void> close();

  const std::string& name() const { return name_; }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  OutputFile(int fd, bool owns, std::string name, bool regular = false)
      : fd_(fd), owns_(owns), regular_(regular), name_(std::move(name)) {}
  int fd_;
  bool owns_;
  bool regular_;  // a regular file: made 0600, synced on close (not a device or a pipe)
  std::string name_;
  std::string buffer_;
};

}  // namespace hh::replay
