#include "receiver/http/request_parser.h"

namespace hh::http {

void RequestParser::on_field_impl(bhttp::field name, beast::string_view name_string, beast::string_view value,
                                  beast::error_code& ec) {
  if (name_string.size() > kMaxFieldBytes || value.size() > kMaxFieldBytes) {
    ec = bhttp::error::header_limit;
    return;
  }
  if (!is_header_done()) {
    if (head_bytes_ == 0) {  // the request line: "METHOD TARGET HTTP/1.1" and CRLF
      head_bytes_ = get().method_string().size() + get().target().size() + 12;
    }
    head_bytes_ += name_string.size() + value.size() + 4;
    if (head_bytes_ > head_limit_) {
      ec = bhttp::error::header_limit;
      return;
    }
  } else {  // a trailer field
    trailer_bytes_ += name_string.size() + value.size() + 4;
    if (trailer_bytes_ > trailer_limit_) {
      ec = bhttp::error::header_limit;
      return;
    }
  }
  get().insert(name, name_string, value);  // what Beast's own parser does with a field
}

}  // namespace hh::http
