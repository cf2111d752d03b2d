#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>

#include "common/json_writer.h"
#include "common/progress.h"

namespace hh::log {
namespace {
std::atomic<Level> g_level{Level::info};

constexpr std::string_view level_name(Level level) {
  switch (level) {
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warn: return "warn";
    case Level::error: return "error";
  }
  return "info";
}
}  // namespace

void set_level(Level level) { g_level.store(level, std::memory_order_relaxed); }
Level level() { return g_level.load(std::memory_order_relaxed); }

std::optional<Level> parse_level(std::string_view name) {
  for (Level l : {Level::debug, Level::info, Level::warn, Level::error}) {
    if (name == level_name(l)) return l;
  }
  return std::nullopt;
}

Line::Line(Level lvl, std::string_view event) : enabled_(lvl >= level()) {
  if (!enabled_) return;
  text_.reserve(160);
  text_.append("{\"level\":\"");
  text_.append(level_name(lvl));
  text_.append("\",\"event\":");
  json::append_string(text_, event);
}

// Keys are escaped as values are: a key is not always a constant of ours (the console logs
// an action's form field names), and an unescaped one could end the line early.
void Line::key(std::string_view name) {
  text_.push_back(',');
  json::append_string(text_, name);
  text_.push_back(':');
}

Line& Line::str(std::string_view key, std::string_view value) {
  if (enabled_) {
    this->key(key);
    json::append_string(text_, value);
  }
  return *this;
}

Line& Line::num(std::string_view key, int64_t value) {
  if (enabled_) {
    this->key(key);
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    text_.append(buf, end);
  }
  return *this;
}

Line& Line::real(std::string_view key, double value) {
  if (enabled_) {
    this->key(key);
    json::append_number(text_, value);
  }
  return *this;
}

Line::~Line() {
  if (!enabled_) return;
  text_.append("}\n");
  Progress::write_line(text_);  // on a terminal, a line of its own rather than glued to a progress line
}

}  // namespace hh::log
