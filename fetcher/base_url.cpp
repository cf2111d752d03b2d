#include "fetcher/base_url.h"

#include "common/http_url.h"

namespace hh::fetcher {

Result<BaseUrl> BaseUrl::parse(std::string_view url) {
  auto parsed = parse_http_url(url);
  if (!parsed) return fail(parsed, "service.base_url");
  if (parsed->has_userinfo) return fail("service.base_url: must not contain user information");
  if (parsed->has_query || parsed->has_fragment) return fail("service.base_url: must not contain a query or fragment");
  if (!parsed->tls && parsed->host != "127.0.0.1") {
    return fail("service.base_url: plain http is only allowed for http://127.0.0.1 (tests); use https");
  }
  BaseUrl base;
  base.tls = parsed->tls;
  base.host = std::move(parsed->host);
  base.port = parsed->port;
  base.path_prefix = std::move(parsed->path);
  while (!base.path_prefix.empty() && base.path_prefix.back() == '/') base.path_prefix.pop_back();
  return base;
}

std::string BaseUrl::authority() const { return url_authority(host, port, tls); }

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
