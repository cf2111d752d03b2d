#include "common/http_url.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>

namespace hh {

Result<HttpUrl> parse_http_url(std::string_view url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) {
    // An absolute URI has no fragment: one with a fragment would be called "not absolute",
    // shown without it (loggable_url()), and nobody could see why.
    if (auto with_fragment = boost::urls::parse_uri(url); with_fragment && with_fragment->has_fragment()) {
      return fail("must not contain a fragment (#…): " + loggable_url(url));
    }
    return fail("not an absolute URL: " + loggable_url(url));
  }
  const boost::urls::url_view& view = *parsed;
  HttpUrl out;
  const std::string scheme = view.scheme();
  if (scheme != "https" && scheme != "http") return fail("scheme must be https or http, got " + scheme);
  out.tls = scheme == "https";
  out.has_userinfo = view.has_userinfo();
  out.has_fragment = view.has_fragment();
  // Boost.URL 1.81 reads a host name that begins with an IPv4 address
  // ("127.0.0.1.example.net:8443") as that address and moves the rest into the path: the
  // request would go to another host and port. Refused, naming the name.
  const size_t scheme_end = url.find("://");
  const std::string_view after_scheme = scheme_end == std::string_view::npos ? "" : url.substr(scheme_end + 3);
  const std::string_view authority = after_scheme.substr(0, after_scheme.find_first_of("/?#"));
  if (view.has_authority() && authority != view.encoded_authority()) {
    return fail("cannot read the host of " + loggable_url(url) +
                ": a host name that begins with an IPv4 address is not supported; use the address or another name");
  }
  out.host = view.encoded_host_address();
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (out.host.empty()) return fail("no host in " + loggable_url(url));
  out.port = out.tls ? 443 : 80;
  if (view.has_port()) {
    const std::string_view port = view.port();
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return fail("bad port " + std::string(port));
    }
    out.port = static_cast<uint16_t>(value);
    out.has_port = true;
  }
  out.path = view.encoded_path();
  out.has_query = view.has_query();
  if (out.has_query) out.query = view.encoded_query();
  return out;
}

std::string loggable_url(std::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  const size_t scheme_end = url.find("://");
  const size_t authority = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  // The authority ends at the first '/' after the last '@' (a password may hold a '/').
  const size_t at = url.rfind('@');
  if (at == std::string_view::npos || at < authority) return std::string(url);
  return std::string(url.substr(0, authority)) + std::string(url.substr(at + 1));
}

std::string masked_url(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  std::string out(url.substr(0, start));
  const size_t authority_end = std::min(url.find_first_of("/?#", start), url.size());
  std::string_view authority = url.substr(start, authority_end - start);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    out += "***@";
    authority.remove_prefix(at + 1);
  }
  out += authority;
  const std::string_view rest = url.substr(authority_end);
  const size_t cut = rest.find_first_of("?#");
  out += rest.substr(0, cut);
  if (cut != std::string_view::npos) out += std::string(1, rest[cut]) + "***";
  return out;
}

std::string HttpUrl::target() const {
  std::string out = path.empty() ? "/" : path;
  if (has_query) out += "?" + query;
  return out;
}

std::string url_authority(std::string_view host, uint16_t port, bool tls) {
  std::string out = host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
  if (port != (tls ? 443 : 80)) out += ":" + std::to_string(port);
  return out;
}

}  // namespace hh
