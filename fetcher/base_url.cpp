#include "fetcher/base_url.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>

namespace hh::fetcher {

Result<BaseUrl> BaseUrl::parse(std::string_view url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return fail("service.base_url: not an absolute URL: " + std::string(url));
  const boost::urls::url_view& view = *parsed;
  BaseUrl base;
  const std::string scheme = view.scheme();
  if (scheme == "https") {
    base.tls = true;
  } else if (scheme == "http") {
    base.tls = false;
  } else {
    return fail("service.base_url: scheme must be https, got " + scheme);
  }
  if (view.has_userinfo()) return fail("service.base_url: must not contain user information");
  if (view.has_query() || view.has_fragment()) return fail("service.base_url: must not contain a query or fragment");
  base.host = view.encoded_host_address();
  if (base.host.size() >= 2 && base.host.front() == '[' && base.host.back() == ']') {
    base.host = base.host.substr(1, base.host.size() - 2);
  }
  if (base.host.empty()) return fail("service.base_url: no host");
  if (!base.tls && base.host != "127.0.0.1") {
    return fail("service.base_url: plain http is only allowed for http://127.0.0.1 (tests); use https");
  }
  base.port = base.tls ? 443 : 80;
  if (view.has_port()) {
    const std::string_view port = view.port();
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return fail("service.base_url: bad port " + std::string(port));
    }
    base.port = static_cast<uint16_t>(value);
  }
  base.path_prefix = view.encoded_path();
  while (!base.path_prefix.empty() && base.path_prefix.back() == '/') base.path_prefix.pop_back();
  return base;
}

std::string BaseUrl::authority() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string out = ipv6 ? "[" + host + "]" : host;
  if (port != (tls ? 443 : 80)) out += ":" + std::to_string(port);
  return out;
}

std::string BaseUrl::full_url(std::string_view target) const {
  return std::string(tls ? "https://" : "http://") + authority() + std::string(target);
}

std::string encode_component(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') ||
                            u == '-' || u == '.' || u == '_' || u == '~';
    if (unreserved) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

Result<std::string> build_path(const BaseUrl& base, const std::vector<std::string_view>& segments) {
  std::string path = base.path_prefix;
  for (const std::string_view segment : segments) {
    if (segment.empty() || segment == "." || segment == "..") {
      return fail("refusing path segment \"" + std::string(segment) + "\"");
    }
    path.push_back('/');
    path += encode_component(segment);
  }
  return path;
}

std::string with_query(std::string path, const std::vector<std::pair<std::string_view, std::string_view>>& query) {
  char separator = '?';
  for (const auto& [key, value] : query) {
    path.push_back(separator);
    path += encode_component(key);
    path.push_back('=');
    path += encode_component(value);
    separator = '&';
  }
  return path;
}

}  // namespace hh::fetcher
