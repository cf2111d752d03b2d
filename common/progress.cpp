#include "common/progress.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace hh {
namespace {

std::atomic<bool> g_line_on_screen{false};  // a progress line is on stderr, not yet cleared

}  // namespace

void Progress::clear_line() {
  if (g_line_on_screen.exchange(false)) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
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
  // At most 5 times a second; at once when a message cleared the line (it comes back
  // under the message).
  if (now - last_draw_ < std::chrono::milliseconds(200) && g_line_on_screen) return;
  last_draw_ = now;
  std::fprintf(stderr, "\r\033[K%s", render().c_str());
  std::fflush(stderr);
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
