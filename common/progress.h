#pragma once
// Progress of long work (replay, capture, rebuild) on a terminal: one line on stderr,
// redrawn at most 5 times a second (a message that cleared it included) with count, rate and ETA. Quiet when stderr is not a
// TTY (systemd, CI, pipes), so logs stay clean.
//
//   Progress progress("replay", total_or_0);
//   for (…) progress.advance(1);
//   progress.finish();   // clears the line
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace hh {

class Progress {
 public:
  // `total` 0 = unknown (no ETA). `enabled`: default = isatty(stderr).
  explicit Progress(std::string label, uint64_t total = 0);
  Progress(std::string label, uint64_t total, bool enabled);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  void set_total(uint64_t total) { total_ = total; }
  void advance(uint64_t n = 1) { update(done_ + n); }
  void update(uint64_t done);
  void finish();
  // Clears the line any Progress drew, so that a message written next starts a line of its
  // own (it was glued to the progress line); the next update draws it again.
  static void clear_line();
  // Writes `text` (whole lines) to stderr, the progress line cleared first. One lock covers
  // this and the drawing, so that a line another thread logs (the WAL sync's, the
  // checkpoint's) is never glued to a line being drawn.
  static void write_line(std::string_view text);

  uint64_t done() const { return done_; }
  double elapsed_seconds() const;

  // The line that would be drawn (for tests): "replay 1200/5000 (24%) 3400/s ETA 1s".
  std::string render() const;

 private:
  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace hh
