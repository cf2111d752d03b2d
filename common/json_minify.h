#pragma once
// Stored JSON re-emitted on one line. Bodies arrive pretty-printed as often as not, and
// healthhook keeps them byte for byte (summaries.data, samples.extra, headers…); every
// output that embeds them (JSON Lines, CSV cells, read-API pages) must not carry their
// line breaks. Whitespace between tokens is dropped; strings and numbers are copied
// byte for byte (simdjson's minify, which does not parse numbers or unescape strings).
#include <string>
#include <string_view>
#include <vector>

namespace hh::json {

// Appends `json` without the whitespace between its tokens. Input that is not JSON (an
// unterminated string) is appended with CR and LF replaced by spaces: still one line.
void append_minified(std::string& out, std::string_view json);

// The elements of a minified top-level array, each its own text ("[{…},{…}]" → "{…}",
// "{…}"), for output that promises one JSON value per line; anything else (an object, a
// scalar) is one element, itself.
std::vector<std::string_view> array_elements(std::string_view minified);

}  // namespace hh::json
