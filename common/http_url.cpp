#include "common/http_url.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cctype>
#include <charconv>

namespace hh {

namespace {

// The authority as written: the text after "://" up to the first '/', '?' or '#' ("" without
// a scheme).
std::string_view written_authority(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  const std::string_view after_scheme = url.substr(scheme_end + 3);
  return after_scheme.substr(0, after_scheme.find_first_of("/?#"));
}

// Whether `authority` ends in a port that is not a number (an IPv6 address keeps its
// colons inside brackets): text there may be a token typed in the wrong place.
bool has_port_that_is_no_number(std::string_view authority) {
  const size_t colon = authority.rfind(':');
  return colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos &&
         authority.substr(colon + 1).find_first_not_of("0123456789") != std::string_view::npos;
}

}  // namespace

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
  const std::string_view authority = written_authority(url);
  if (view.has_authority() && authority != view.encoded_authority()) {
    // The IPv4 reading is the fault only when the host goes on past the address ("127.0.0.1.example.net"),
    // not when the port is what cannot be read ("10.0.0.5:44x3").
    const std::string_view host_text = authority.substr(0, authority.rfind(':'));
    const bool ipv4_start = !authority.empty() && std::isdigit(static_cast<unsigned char>(authority.front())) &&
                            host_text.find_first_not_of("0123456789.") != std::string_view::npos;
    return fail("cannot read the host of " + loggable_url(url) +
                (ipv4_start ? ": a host name that begins with an IPv4 address is not supported; use the address or "
                              "another name"
                            : ": characters a URL's host and port cannot hold (percent-encode them)"));
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
      // Shown only when it is a number: text there may be a token typed in the wrong place.
      const bool digits = !port.empty() && port.find_first_not_of("0123456789") == std::string_view::npos;
      return fail(digits ? "bad port " + std::string(port) : std::string("bad port: not a number"));
    }
    out.port = static_cast<uint16_t>(value);
    out.has_port = true;
  }
  out.path = view.encoded_path();
  out.has_query = view.has_query();
  if (out.has_query) out.query = view.encoded_query();
  return out;
}

namespace {

// A URL's text cut where a message may show it, parsed or not. Text the URI grammar reads
// plainly is cut by it (an '@' in a query is not user information); other text (a
// password with a raw '#', '?' or '/') is cut at the LAST '@' after the scheme, so that a
// secret is never shown: at worst more is hidden than needed.
struct ShownParts {
  std::string prefix;          // "https://"
  bool has_userinfo = false;   // hidden
  std::string host_and_path;   // shown
  char tail_mark = 0;          // '?' or '#' where a query or fragment (hidden) starts; 0: none
};

// Whether the grammar's reading of `url` can be trusted to have found the user
// information: Boost.URL reads "https://u:pw#x@host" as host "u", port "pw" and fragment
// "x@host". A port that is a number, no '@' in the path or fragment, and one in the query
// only after a path ("/hook?email=a@b.example") leave no such doubt.
bool plainly_read(std::string_view url, const boost::urls::url_view& view) {
  // The authority is the text up to the first '/', '?' or '#' (Boost.URL 1.81 reads
  // "https://host:x/…" as authority "host:" and path "x/…", and "127.0.0.1.example.net" as an
  // address), and ends at a port that is a number, if it has one (an IPv6 address keeps its
  // colons inside brackets).
  if (url.find("://") != std::string_view::npos && written_authority(url) != view.encoded_authority()) return false;
  if (has_port_that_is_no_number(view.encoded_authority())) return false;
  if (view.encoded_path().find('@') != std::string_view::npos) return false;
  if (view.has_fragment() && view.encoded_fragment().find('@') != std::string_view::npos) return false;
  if (view.has_query() && view.encoded_query().find('@') != std::string_view::npos && view.encoded_path().empty()) {
    return false;
  }
  return true;
}

ShownParts shown_parts(std::string_view url) {
  ShownParts parts;
  if (auto parsed = boost::urls::parse_uri(url); parsed && plainly_read(url, *parsed)) {
    const boost::urls::url_view& view = *parsed;
    parts.prefix = std::string(view.scheme()) + (view.has_authority() ? "://" : ":");
    parts.has_userinfo = view.has_userinfo();
    parts.host_and_path = std::string(view.encoded_host_and_port()) + std::string(view.encoded_path());
    parts.tail_mark = view.has_query() ? '?' : view.has_fragment() ? '#' : 0;
    return parts;
  }
  const size_t scheme_end = url.find("://");
  const size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  parts.prefix = std::string(url.substr(0, start));
  std::string_view rest = url.substr(start);
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    parts.has_userinfo = true;
    rest.remove_prefix(at + 1);
  }
  const size_t cut = rest.find_first_of("?#");
  parts.host_and_path = std::string(rest.substr(0, cut));
  if (cut != std::string_view::npos) parts.tail_mark = rest[cut];
  // A port that is not a number may be a token typed in the wrong place.
  const std::string_view authority = std::string_view(parts.host_and_path).substr(0, parts.host_and_path.find('/'));
  if (has_port_that_is_no_number(authority)) {
    const size_t colon = authority.rfind(':');
    parts.host_and_path.replace(colon + 1, authority.size() - colon - 1, "***");
  }
  return parts;
}

}  // namespace

std::string loggable_url(std::string_view url) {
  const ShownParts parts = shown_parts(url);
  return parts.prefix + parts.host_and_path;
}

std::string masked_url(std::string_view url) {
  const ShownParts parts = shown_parts(url);
  std::string out = parts.prefix + (parts.has_userinfo ? "***@" : "") + parts.host_and_path;
  if (parts.tail_mark != 0) out += std::string(1, parts.tail_mark) + "***";
  return out;
}

std::string HttpUrl::target() const {
  std::string out = path.empty() ? "/" : path;
  if (has_query) out += "?" + query;
  return out;
}

namespace {
std::string bracketed(std::string_view host) {
  return host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
}
}  // namespace

std::string url_authority(std::string_view host, uint16_t port, bool tls) {
  std::string out = bracketed(host);
  if (port != (tls ? 443 : 80)) out += ":" + std::to_string(port);
  return out;
}

std::string host_port(std::string_view host, uint16_t port) { return bracketed(host) + ":" + std::to_string(port); }

}  // namespace hh
