#include "replay/sendable_headers.h"

#include <boost/beast/core/string.hpp>  // iequals: ASCII case-insensitive

namespace hh::replay {
namespace {

// RFC 9110 token characters (a header name) and a value without CR, LF or NUL.
bool valid_header(const CaptureHeader& h) {
  if (h.name.empty()) return false;
  for (const unsigned char c : h.name) {
    if (c <= 0x20 || c >= 0x7f || std::string_view("\"(),/:;<=>?@[\\]{}").find(static_cast<char>(c)) !=
                                       std::string_view::npos) {
      return false;
    }
  }
  return h.value.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos;
}

}  // namespace

bool is_replaced_header(std::string_view name) {
  static constexpr std::string_view kReplaced[] = {
      "host",    "content-length", "transfer-encoding", "connection",        "keep-alive",
      "te",      "trailer",        "upgrade",           "expect",            "proxy-connection",
      "svix-id", "svix-timestamp", "svix-signature",    "webhook-id",        "webhook-timestamp",
      "webhook-signature"};
  for (auto replaced : kReplaced) {
    if (boost::beast::iequals(name, replaced)) return true;
  }
  return false;
}

std::string unsendable_header(const std::vector<CaptureHeader>& headers) {
  for (const auto& h : headers) {
    if (!is_replaced_header(h.name) && !valid_header(h)) return "headers." + h.name + ": cannot be sent as an HTTP header";
  }
  return {};
}

}  // namespace hh::replay
