#include "forward/destination_url.h"

#include <boost/url/parse.hpp>
#include <charconv>

namespace hh::forward {

Result<DestinationUrl> DestinationUrl::parse(std::string_view url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return fail("not an absolute URL: " + std::string(url));
  const boost::urls::url_view& view = *parsed;
  DestinationUrl out;
  const std::string scheme = view.scheme();
  if (scheme != "https" && scheme != "http") return fail("scheme must be https or http, got " + scheme);
  out.tls = scheme == "https";
  if (view.has_userinfo()) return fail("must not contain user information");
  if (view.has_fragment()) return fail("must not contain a fragment");
  out.host = view.encoded_host_address();
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (out.host.empty()) return fail("no host in " + std::string(url));
  out.port = out.tls ? 443 : 80;
  if (view.has_port()) {
    const std::string_view port = view.port();
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return fail("bad port " + std::string(port));
    }
    out.port = static_cast<uint16_t>(value);
  }
  out.target = view.encoded_path();
  if (out.target.empty()) out.target = "/";
  if (view.has_query()) out.target += "?" + std::string(view.encoded_query());
  const bool ipv6 = out.host.find(':') != std::string::npos;
  out.authority = ipv6 ? "[" + out.host + "]" : out.host;
  if (out.port != (out.tls ? 443 : 80)) out.authority += ":" + std::to_string(out.port);
  return out;
}

}  // namespace hh::forward
