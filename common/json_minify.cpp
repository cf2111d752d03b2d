#include "common/json_minify.h"

#include <simdjson.h>

#include <algorithm>

namespace hh::json {

void append_minified(std::string& out, std::string_view json) {
  const size_t at = out.size();
  // The output is never longer than the input (simdjson: "dst must be allocated up to len bytes").
  out.resize(at + json.size());
  size_t written = 0;
  if (simdjson::minify(json.data(), json.size(), out.data() + at, written) == simdjson::SUCCESS) {
    out.resize(at + written);
    return;
  }
  out.resize(at);
  out.append(json);
  std::replace_if(out.begin() + static_cast<std::ptrdiff_t>(at), out.end(),
                  [](char c) { return c == '\n' || c == '\r'; }, ' ');
}

}  // namespace hh::json
