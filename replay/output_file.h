#pragma once
// Buffered output for exports (capture files, `healthhook query` rows): callers append
// to buffer() and call flush_if_full() per row; the buffer is written when it passes
// 1 MiB, so memory stays flat for any number of rows. Errors (disk full, closed pipe)
// come back as values naming the file.
//
// A file is written as FILE.partial, mode 0600 (exports hold health data), and renamed
// to FILE by close() once it is whole and synced: an export killed or failed half-way
// never leaves a cut file under the name asked for (an existing FILE stays as it was; a
// failed one's .partial is removed, a killed one's stays, named as incomplete). A device,
// a FIFO or a symbolic link is written as it is, its mode untouched. "-" is standard
// output. Used by one thread.
#include <string>

#include "common/result.h"

namespace hh::replay {

class OutputFile {
 public:
  static Result<OutputFile> open(const std::string& path);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();  // not closed: closes without reporting errors, removes a .partial

  std::string& buffer() { return buffer_; }
  Result<void> flush_if_full() { return buffer_.size() >= kFlushBytes ? flush() : Result<void>{}; }
  Result<void> flush();
  // Flushes and closes; a file's data is synced to disk, then it takes its name.
  Result<void> close();

  const std::string& name() const { return name_; }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  OutputFile(int fd, bool owns, std::string name, std::string partial = {})
      : fd_(fd), owns_(owns), name_(std::move(name)), partial_(std::move(partial)) {}
  int fd_;
  bool owns_;
  std::string name_;
  std::string partial_;  // a regular file: written here, synced and renamed to name_ on close
  std::string buffer_;
};

}  // namespace hh::replay
