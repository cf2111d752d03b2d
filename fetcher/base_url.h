#pragma once
// The service's base URL (service.base_url) and the URLs built from it.
//
// Policy: https:// always; plain http:// only for http://127.0.0.1[:port] (the tests'
// fake service). Anything else is refused here, so no setting, typo or redirect can make
// the fetcher send the API key in clear text. (config/load_settings.cpp validates the
// same rule at start-up; this is the check at the point of use.)
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hh::fetcher {

struct BaseUrl {
  bool tls = true;
  std::string host;         // as written: a DNS name or an IP literal (IPv6 without brackets)
  uint16_t port = 443;
  std::string path_prefix;  // "" or "/some/prefix" (no trailing '/')

  static Result<BaseUrl> parse(std::string_view url);

  // "host" or "host:port" when the port is not the scheme's default (the Host header).
  std::string authority() const;
  // scheme://authority + target, for logs and the fetch context (never carries the key).
  std::string full_url(std::string_view target) const;
};

// Percent-encodes everything but RFC 3986 unreserved characters (a path segment or a
// query value from untrusted text, e.g. a workout id from a webhook).
std::string encode_component(std::string_view text);

// path_prefix + "/" + each segment percent-encoded. Fails on an empty, "." or ".."
// segment: an id must never change which endpoint is called.
Result<std::string> build_path(const BaseUrl& base, const std::vector<std::string_view>& segments);

// Appends "?k=v&k=v" (values percent-encoded) to `path`.
std::string with_query(std::string path, const std::vector<std::pair<std::string_view, std::string_view>>& query);

}  // namespace hh::fetcher
