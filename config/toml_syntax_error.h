#pragma once
// The one-line message of a TOML syntax error, said as a key's error is
// ("healthhook.toml:1:12: listen: …"): toml++ reports only where and what its parser
// expected ("Error while parsing time: expected ':'", for `listen = 127.0.0.1:80`).
#include <cstdint>
#include <string>
#include <string_view>

namespace hh::config {

// "SOURCE:LINE:COLUMN: KEY: DESCRIPTION", KEY read from the `key =` at the start of that
// line of `text` with its table ("service.base_url", "forward[1].url"; left out on a line
// that sets no key). When the value there is bare text (no quotes, and no number, boolean,
// array or inline table) it ends with "(a string needs quotes: key = \"…\")": the usual
// cause, a string written without its quotes (not said for a key that takes a number or
// true/false).
std::string toml_syntax_error(std::string_view text, std::string_view source_name, int64_t line, int64_t column,
                              std::string_view description);

}  // namespace hh::config
