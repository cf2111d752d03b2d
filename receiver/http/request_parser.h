#pragma once
// The parser every request is read with: Beast's, with bounds of its own, stopping at a
// chunked body's last chunk. Beast 1.81 stores a field's name or value in at most 65,533
// bytes and throws std::length_error past that, from inside the read operation, where no
// coroutine can catch it: the exception leaves io_context::run() and ends the process.
// header_limit does not prevent it where a head may be larger (max_header_bytes up to
// 1 MiB). A field that long fails the read as header_limit instead (431).
//
// A chunked body's last chunk stops the read with error::end_of_chunk and at_last_chunk():
// its trailer section is read by the session (chunked_body_end.h), never by Beast, which
// would take trailer fields for the message's framing. Beast reports the last chunk only
// once the whole trailer section is in the buffer; the connection's read buffer is capped
// (session.cpp), which bounds what a trailer or a chunk header holds unparsed.
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
  // The most bytes the request line and header fields may take (Beast's header_limit too).
  void head_limit(size_t bytes) {
    head_limit_ = bytes;
    header_limit(static_cast<std::uint32_t>(bytes));
  }
  // A chunked body's last chunk was reached: the read stopped there with
  // error::end_of_chunk, the buffer starting at the last chunk (or at the CRLF ending the
  // chunk before it), the trailer section after it whole.
  bool at_last_chunk() const { return at_last_chunk_; }

 private:
  void on_field_impl(bhttp::field name, beast::string_view name_string, beast::string_view value,
                     beast::error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t size, beast::string_view extensions, beast::error_code& ec) override;

  size_t head_limit_ = SIZE_MAX;
  size_t head_bytes_ = 0;
  bool at_last_chunk_ = false;
};

}  // namespace hh::http
