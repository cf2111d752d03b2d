#pragma once
// The one JSON scanner for bodies too large for a document: the fetcher's checks of
// fetched pages (check_json, top_level_member, decode_string) and the processor's
// workout-stream reader (rows/stream_points.h) read their text through it, in place.
// Scanning allocates nothing (an error message and a decoded string are the only
// allocations here) and recurses at most as deep as the max_depth its caller passes.
//
// Why not simdjson (3.0.1, the version we build with): DOM and On-Demand alike start
// with stage 1 over the whole document, which writes a structural index of one uint32_t
// per input byte (dom_parser_implementation::set_capacity allocates the capacity rounded
// up to 64): 4 bytes per byte of a body that can be tens of MB, before the first value
// is read. iterate_many() bounds the index only for a sequence of documents, each of
// which must fit in one batch. On-Demand also walks a document with one forward-only
// iterator, while the stream reader needs eleven positions at once (one per parallel
// array). Debian 12's other parsers do not fit better: Boost.JSON's basic_parser (1.81)
// is a push parser over one position, with no member's raw text to hand out, and
// RapidJSON 1.1.0 has no pull parser (IterativeParseNext came after that release).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hh::json {

// simdjson's default nesting limit (simdjson::DEFAULT_MAX_DEPTH; the outermost array or
// object is level 1): a reader that skips over values it does not keep accepts what
// simdjson would parse, and nothing deeper.
inline constexpr size_t kSimdjsonMaxDepth = 1024;

// A read position in one JSON text, which must outlive the scanner. Reads start exactly
// at offset() (call skip_space() first where whitespace may stand) and, on success, move
// past what they read. A read that fails returns false, leaves offset() at the byte
// that is wrong and records the problem; the first problem recorded is kept. A copy is
// a second position in the same text, and cheap (two views and two offsets).
class Scanner {
 public:
  Scanner() = default;
  explicit Scanner(std::string_view text) : text_(text) {}

  size_t offset() const { return pos_; }
  bool at_end() const { return pos_ >= text_.size(); }
  // The next byte; '\0' at the end.
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  // Skips JSON whitespace (space, tab, CR, LF).
  void skip_space();
  // Moves past `c` when it is the next byte.
  bool skip(char c);

  // One whole text per RFC 8259: whitespace, one value (see value()), whitespace, end.
  bool document(size_t max_depth);
  // One value of any kind, its syntax checked throughout; arrays and objects nested at
  // most `max_depth` deep (0: scalars only). Recurses once per level of nesting.
  bool value(size_t max_depth);
  // A string literal: no raw control characters, only JSON's escapes. `content`, when
  // given, receives the text between the quotes with escapes as written.
  bool string(std::string_view* content = nullptr);
  // A number: '-'?, no leading zero, optional fraction and exponent. `text`, when given,
  // receives it. Syntax only: 1e400 is a number here.
  bool number(std::string_view* text = nullptr);
  // The literal `word` (true, false or null).
  bool literal(std::string_view word);
  // One token, checked by itself but not against what stands around it: a punctuation
  // byte, a string, or a number or literal. As simdjson reads a scalar, a number or
  // literal runs to the next whitespace, ',', ':', ']' or '}' (01, 1x and nullx are
  // malformed). For readers that find where a value ends and check its parts later.
  bool token();

  // What the first failed read found ("expected ',' or ']'"); empty until one failed.
  std::string_view problem() const { return problem_; }
  // Where: a byte offset into the text.
  size_t problem_offset() const { return problem_offset_; }

 private:
  bool fail(std::string_view what);
  bool digits();
  bool array(size_t max_depth);
  bool object(size_t max_depth);

  std::string_view text_;
  size_t pos_ = 0;
  std::string_view problem_;  // a string literal of this file
  size_t problem_offset_ = 0;
};

// RFC 8259 syntax of one whole document (whitespace around it allowed); no check of
// UTF-8 or of a number's range. The error names the byte offset:
// "malformed JSON at byte 1234: expected ',' or '}'".
Result<void> check_json(std::string_view text, size_t max_depth = 64);

// True when `text` begins with one whole JSON value followed by more than whitespace
// ("{…} trailing"): what simdjson 3.0.1 reports as a document that "ended early".
bool text_after_value(std::string_view text, size_t max_depth);

// The first byte of `text` after leading whitespace ('{' for an object, '[' for an
// array); '\0' when there is none.
char first_byte(std::string_view text);

// The raw text of the top-level member `key` (e.g. `null`, `"abc"`, `[1,2]`) of a
// document that passed check_json; nullopt when the document is not an object or has no
// such member. Keys are compared as written (no unescaping); the first match wins.
std::optional<std::string_view> top_level_member(std::string_view text, std::string_view key);

// A JSON string literal (with its quotes) decoded to UTF-8; nullopt when `literal` is not
// a string.
std::optional<std::string> decode_string(std::string_view literal);

// The escape that starts `text` (at its backslash): the UTF-8 bytes it stands for and how
// many bytes of `text` it takes (a surrogate pair is one escape of 12); nullopt when it is
// none, or is cut short by the end of `text`.
struct DecodedEscape {
  std::string bytes;
  size_t length = 0;
};
std::optional<DecodedEscape> decode_escape(std::string_view text);

}  // namespace hh::json
