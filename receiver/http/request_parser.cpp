#include "receiver/http/request_parser.h"

namespace hh::http {

void RequestParser::on_field_impl(bhttp::field name, beast::string_view name_string, beast::string_view value,
                                  beast::error_code& ec) {
  if (name_string.size() > kMaxFieldBytes || value.size() > kMaxFieldBytes) {
    ec = bhttp::error::header_limit;
    return;
  }
  if (head_bytes_ == 0) {  // the request line: "METHOD TARGET HTTP/1.1" and CRLF
    head_bytes_ = get().method_string().size() + get().target().size() + 12;
  }
  head_bytes_ += name_string.size() + value.size() + 4;
  if (head_bytes_ > head_limit_) {
    ec = bhttp::error::header_limit;
    return;
  }
  get().insert(name, name_string, value);  // what Beast's own parser does with a field
}

void RequestParser::on_chunk_header_impl(std::uint64_t size, beast::string_view, beast::error_code& ec) {
  // Only the last chunk stops the read: Beast would parse the trailer section next, and
  // take its fields for the message's framing.
  if (size != 0) return;
  at_last_chunk_ = true;
  ec = bhttp::error::end_of_chunk;
}

}  // namespace hh::http
