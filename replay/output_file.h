#pragma once
// Buffered output for exports (capture files, `healthhook query` rows): callers append
// to buffer() and call flush_if_full() per row; the buffer is written when it passes
// 1 MiB, so memory stays flat for any number of rows. Errors (disk full, closed pipe)
// come back as values naming the file.
//
// A file is written as FILE.partial, mode 0600 (exports hold health data), and renamed
// to FILE by close() once it is whole and synced: an export killed or failed half-way
// never leaves a cut file under the name asked for (an existing FILE stays as it was; a
// failed one's .partial is removed, a killed one's stays, named as incomplete). An export
// holds a lock on its .partial: a second one to the same name at once is refused. A
// symbolic link leads to the file that takes the export; a .partial that is a link is
// refused. A device or a FIFO is written as it is, its mode untouched; so is an existing
// file in a folder this user cannot write (made 0600, no .partial). "-" is standard
// output. Never over a file of the store the export reads (`keep`: store::files_of()),
// whether named as it is, through a link or by a hard link. Used by one thread.
#include <span>
#include <string>

#include "common/result.h"

namespace hh::replay {

class OutputFile {
 public:
  static Result<OutputFile> open(const std::string& path, std::span<const std::string> keep = {});
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
  OutputFile(int fd, bool owns, std::string name, std::string partial = {}, bool sync = false)
      : fd_(fd), owns_(owns), sync_(sync), name_(std::move(name)), partial_(std::move(partial)) {}
  static Result<OutputFile> open_in_place(const std::string& name, bool regular);
  int fd_;
  bool owns_;
  bool sync_;  // a regular file written in place: synced on close
  std::string name_;
  std::string partial_;  // a regular file: written here, synced and renamed to name_ on close
  std::string buffer_;
};

}  // namespace hh::replay
