#pragma once
// An http:// or https:// URL taken apart for a client connection (common/http_client): whom to
// connect to, the request target and the Host header. The one parser of the fetcher's
// base URL, `replay --to` and the forwarding destinations; which schemes and hosts each
// accepts is that caller's policy, checked on the result.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hh {

// "host" or "host:port" when `port` is not the scheme's default; IPv6 in brackets.
std::string url_authority(std::string_view host, uint16_t port, bool tls);

// "host:port", an IPv6 address in brackets ("[::1]:8080"), as `listen` takes it back: the
// one way an endpoint is logged and shown (serve's "listening", its status, errors).
std::string host_port(std::string_view host, uint16_t port);

struct HttpUrl {
  bool tls = true;           // https
  std::string host;          // a name or an IP literal, IPv6 without brackets
  uint16_t port = 443;       // the URL's, else the scheme's
  bool has_port = false;     // the URL names one
  std::string path;          // as written, percent-encoded ("" when none)
  std::string query;         // without '?' ("" when none)
  bool has_query = false;
  bool has_userinfo = false;
  bool has_fragment = false;

  // path (or "/") and "?query": the request target.
  std::string target() const;
  // The Host header (url_authority).
  std::string authority() const { return url_authority(host, port, tls); }
  // scheme://authority/path: the URL without its query, which may hold a token (for names
  // and logs).
  std::string without_query() const { return std::string(tls ? "https://" : "http://") + authority() + path; }
};

// Any absolute http:// or https:// URL with a host; the error says what is wrong (the
// caller names the setting) and shows the URL only as loggable_url() does.
Result<HttpUrl> parse_http_url(std::string_view url);

// `url` as a message may show it, parsed or not: without its user information and
// without its query and fragment, which may hold a token ("https://user:pw@host/p?token=x"
// → "https://host/p"). Text that is no URI (a password with a raw '#', '?' or '/') is cut
// at its last '@': more hidden than needed, never less.
std::string loggable_url(std::string_view url);

// `url` as a message that refuses it shows it: where the user information, query and
// fragment were, "***" ("https://user:pw@host/p?token=x" → "https://***@host/p?***"), so
// the reader sees what is wrong and never the secret. Works on text that does not parse.
std::string masked_url(std::string_view url);

}  // namespace hh
