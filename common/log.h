#pragma once
// Structured logs: one JSON object per line on stderr, no timestamp (journald adds one).
// Contract: never pass a request body or a secret to a log line.
//
//   hh::log::info("listening").str("address", "127.0.0.1:8080").num("threads", 2);
//
// The line is written with one write(2) when the temporary is destroyed, so lines from
// different threads never interleave.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hh::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

void set_level(Level level);
Level level();
std::optional<Level> parse_level(std::string_view name);

class Line {
 public:
  Line(Level level, std::string_view event);
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;
  ~Line();

  Line& str(std::string_view key, std::string_view value);
  Line& num(std::string_view key, int64_t value);
  Line& real(std::string_view key, double value);

 private:
  void key(std::string_view name);
  std::string text_;
  bool enabled_;
};

inline Line debug(std::string_view event) { return Line(Level::debug, event); }
inline Line info(std::string_view event) { return Line(Level::info, event); }
inline Line warn(std::string_view event) { return Line(Level::warn, event); }
inline Line error(std::string_view event) { return Line(Level::error, event); }

}  // namespace hh::log
