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

std::vector<std::string_view> array_elements(std::string_view minified) {
  if (minified.size() < 2 || minified.front() != '[' || minified.back() != ']') return {minified};
  std::vector<std::string_view> elements;
  size_t depth = 0, start = 1;
  bool in_string = false;
  for (size_t i = 1; i + 1 < minified.size(); ++i) {
    const char c = minified[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character, a quote included
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      elements.push_back(minified.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start + 1 < minified.size()) elements.push_back(minified.substr(start, minified.size() - 1 - start));
  return elements;
}

}  // namespace hh::json
