#include "common/progress.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <mutex>

namespace hh {
namespace {

std::mutex g_terminal;          // the drawing, the clearing and the lines written between
bool g_line_on_screen = false;  // a progress line is on stderr, not yet cleared (g_terminal)

void write_all(std::string_view text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EPIPE (the reader went away; serve ignores SIGPIPE), a full disk: dropped
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void clear_locked() {
  if (!g_line_on_screen) return;
  g_line_on_screen = false;
  std::fflush(stderr);  // stderr is unbuffered; whatever stdio holds goes before the clear
  write_all("\r\033[K");
}

}  // namespace

void Progress::clear_line() {
  const std::lock_guard lock(g_terminal);
  clear_locked();
}

void Progress::write_line(std::string_view text) {
  const std::lock_guard lock(g_terminal);
  clear_locked();
  write_all(text);
}

Progress::Progress(std::string label, uint64_t total) : Progress(std::move(label), total, ::isatty(STDERR_FILENO) == 1) {}

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled), started_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { finish(); }

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

std::string Progress::render() const {
  const double seconds = elapsed_seconds();
  const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0;
  char line[160];
  if (total_ > 0) {
    const double eta = rate > 0 ? static_cast<double>(total_ > done_ ? total_ - done_ : 0) / rate : 0;
    std::snprintf(line, sizeof line, "%s %llu/%llu (%d%%) %.0f/s ETA %.0fs", label_.c_str(),
                  static_cast<unsigned long long>(done_), static_cast<unsigned long long>(total_),
                  static_cast<int>(100.0 * static_cast<double>(done_) / static_cast<double>(total_)), rate, eta);
  } else {
    std::snprintf(line, sizeof line, "%s %llu %.0f/s", label_.c_str(), static_cast<unsigned long long>(done_), rate);
  }
  return line;
}

void Progress::update(uint64_t done) {
  done_ = done;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  // At most 5 times a second, also after a message cleared the line: thousands of log
  // lines a second must not become thousands of redraws.
  if (now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  const std::string line = "\r\033[K" + render();
  const std::lock_guard lock(g_terminal);
  std::fflush(stderr);
  write_all(line);
  drawn_ = true;
  g_line_on_screen = true;
}

void Progress::finish() {
  if (drawn_) {
    clear_line();
    drawn_ = false;
  }
}

}  // namespace hh
