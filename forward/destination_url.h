#pragma once
// A [[forward]] url, taken apart for the HTTP client: scheme, host, port, the request
// target (path and query) and the Host header.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hh::forward {

struct DestinationUrl {
  bool tls = true;
  std::string host;       // a name or an IP literal (IPv6 without brackets)
  uint16_t port = 443;
  std::string target;     // "/path?query", at least "/"
  std::string authority;  // the Host header: host, and the port when not the scheme's default

  // http(s) only; no user information or fragment.
  static Result<DestinationUrl> parse(std::string_view url);
};

}  // namespace hh::forward
