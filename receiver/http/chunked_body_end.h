#pragma once
// The end of a chunked body: the last chunk and the trailer section after it, read here and
// not by Beast. Beast 1.81 takes a trailer field named Content-Length, Transfer-Encoding or
// Connection as the message's own framing (a delivery with a "Content-Length" trailer was
// refused "bad Content-Length"); a trailer is never framing, and its fields are ignored
// (RFC 9110 §6.5.1: never merged into the head, never checked as signature headers, never
// stored). Their form is checked as Beast checks a head's fields, so a line the head would
// refuse is refused here too (400):
//
//   body-end        = [ CRLF ] last-chunk trailer-section CRLF
//                       ; the CRLF that ends the chunk before, when there was one
//   last-chunk      = 1*"0" [ chunk-ext ] CRLF   ; Beast has checked it
//   trailer-section = *( field-line CRLF )
//   field-line      = field-name ":" field-value
//                   / 1*( SP / HTAB ) field-value   ; obs-fold: more of the field before
//   field-name      = token                         ; no space inside it or before ':'
//   field-value     = *( any octet but CTLs, HTAB allowed )
//
// Bounds, as a head's: a field name, or a line's value, over kMaxFieldBytes, or field lines
// (each with its CRLF) over `trailer_limit` in all: too large (431).
#include <cstddef>
#include <string_view>

namespace hh::http {

struct ChunkedBodyEnd {
  enum class Verdict { complete, malformed, too_large };
  Verdict verdict = Verdict::malformed;
  size_t bytes = 0;          // complete: the bytes the body's end took from the start
  std::string_view reason;   // malformed: what is wrong, for the answer
};

// Reads the body's end at the start of `bytes` (which hold it whole: Beast saw the empty
// line ending the trailer section before it reported the last chunk).
ChunkedBodyEnd read_chunked_body_end(std::string_view bytes, size_t trailer_limit);

}  // namespace hh::http
