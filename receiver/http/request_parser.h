#pragma once
// The parser every request is read with: Beast's, with one more bound. Beast 1.81 stores a
// field's name or value in at most 65,533 bytes and throws std::length_error past that,
// from inside the read operation, where no coroutine can catch it: the exception leaves
// io_context::run() and ends the process. header_limit does not prevent it where a head
// may be larger (max_header_bytes up to 1 MiB), nor for a chunked body's trailer fields,
// which it does not cover at all. A field that long fails the read as header_limit instead
// (431); so do trailer fields over trailer_limit(), and the connection's read buffer is
// capped (session.cpp), which bounds what a trailer or a chunk header holds unparsed.
//
// And header_limit is not a bound on the whole head in Beast 1.81: the fields of a read
// that has no end of head yet are parsed and consumed, and the limit then applies to what
// is left, so a head of many short lines passed at its first read's size plus the limit
// (24 KiB at 16). The head is counted here as it is parsed: the request line and each
// field as "Name: value" plus CRLF; past header_limit, header_limit (431).
#include <cstdint>

#include "receiver/http/http_types.h"

namespace hh::http {

// The longest field name or value Beast's fields hold (its offsets are 16-bit, less the
// two bytes of ": " / CRLF it keeps with each).
inline constexpr size_t kMaxFieldBytes = 65533;

class RequestParser final : public bhttp::request_parser<bhttp::string_body> {
 public:
  // The most bytes a chunked body's trailer fields may take (names, values, ": " and CRLF;
  // not the blanks around a value, which Beast has trimmed: the read buffer's cap bounds
  // those), which header_limit does not cover: past it, header_limit.
  void trailer_limit(size_t bytes) { trailer_limit_ = bytes; }
  // The most bytes the request line and header fields may take (Beast's header_limit too).
  void head_limit(size_t bytes) {
    head_limit_ = bytes;
    header_limit(static_cast<std::uint32_t>(bytes));
  }

 private:
  void on_field_impl(bhttp::field name, beast::string_view name_string, beast::string_view value,
                     beast::error_code& ec) override;

  size_t head_limit_ = SIZE_MAX;
  size_t head_bytes_ = 0;
  size_t trailer_limit_ = SIZE_MAX;
  size_t trailer_bytes_ = 0;
};

}  // namespace hh::http
