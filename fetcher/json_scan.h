#pragma once
// Checks fetched bodies and reads one top-level member, without building a DOM.
//
// Why not simdjson: its structural index needs about 4 bytes per input byte, and DOM
// parsing more; a 30 MB workout stream must cost only a few MB beyond its body
// (events/stream_points.h says the same for the processor's reader). This is a
// single pass with no allocation, recursion bounded by `max_depth`.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hh::fetcher {

// RFC 8259 syntax of one whole document (whitespace around it allowed). The error names
// the byte offset: "malformed JSON at byte 1234: expected ',' or '}'".
Result<void> check_json(std::string_view text, size_t max_depth = 64);

// The raw text of the top-level member `key` (e.g. `null`, `"abc"`, `[1,2]`) of a
// document that passed check_json; nullopt when the document is not an object or has no
// such member. Keys are compared as written (no unescaping).
std::optional<std::string_view> top_level_member(std::string_view text, std::string_view key);

// A JSON string literal (with its quotes) decoded to UTF-8; nullopt when `literal` is not
// a string.
std::optional<std::string> decode_string(std::string_view literal);

}  // namespace hh::fetcher
