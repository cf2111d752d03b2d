#include "fetcher/calls/link_codes.h"

#include <simdjson.h>

#include <cctype>

#include "common/timestamp.h"
#include "fetcher/service_values.h"

namespace hh::fetcher {
namespace {

constexpr size_t kCodeLength = 12;  // (sk|pk)(eu|us) and 8 hexadecimal digits

bool lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// The interface's exchange URL: "<app_scheme>://<app_host>?code=<code>", its code part
// matching the code pattern anchored at the end.
bool is_exchange_url(std::string_view url) {
  if (url.find("://") == std::string_view::npos || url.size() < kCodeLength) return false;
  return is_link_code(url.substr(url.size() - kCodeLength));
}

}  // namespace

bool is_link_code(std::string_view code) {
  if (code.size() < kCodeLength) return false;
  const std::string_view kind = code.substr(0, 2), region = code.substr(2, 2);
  if ((kind != "sk" && kind != "pk") || (region != "eu" && region != "us")) return false;
  for (const char c : code.substr(4, 8)) {
    if (!lower_hex(c)) return false;
  }
  return true;
}

Result<LinkCode> create_link_code(const ServiceAccess& access, std::string_view user_id,
                                  std::optional<std::string_view> expires_at) {
  if (!is_uuid(user_id)) return fail(ErrorKind::data, "user id " + quoted_value(user_id) + " is not a UUID");
  ServiceCall call;
  call.method = Method::post;
  call.segments = {"v2", "link", "code", "create"};
  call.query = {{"user_id", std::string(user_id)}};
  if (expires_at) call.query.emplace_back("expires_at", std::string(*expires_at));
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);

  const std::string unexpected = reply->request + ": unexpected answer: ";
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(reply->body);
  simdjson::dom::object object;
  if (parser.parse(padded).get_object().get(object)) return fail(unexpected + "not a JSON object");
  LinkCode link;
  for (auto [key, field] : {std::pair{"code", &link.code}, std::pair{"exchange_url", &link.exchange_url},
                            std::pair{"expires_at", &link.expires_at}}) {
    std::string_view text;
    if (object[key].get_string().get(text)) return fail(unexpected + key + ": missing or not a string");
    *field = std::string(text);
  }
  if (!is_link_code(link.code)) {
    return fail(unexpected + "code " + quoted_value(link.code) + " does not match ^(sk|pk)(eu|us)([\\da-f]{8})");
  }
  if (!is_exchange_url(link.exchange_url)) {
    return fail(unexpected + "exchange_url " + quoted_value(link.exchange_url) +
                " is not <app_scheme>://<app_host>?code=<code>");
  }
  // The app exchanges the URL's code, the command prints `code`: two codes in one answer
  // would link with one and show the other.
  if (!link.exchange_url.ends_with("code=" + link.code)) {
    return fail(unexpected + "exchange_url " + quoted_value(link.exchange_url) + " does not carry code=" +
                quoted_value(link.code));
  }
  if (!parse_iso8601_ms(link.expires_at)) {
    return fail(unexpected + "expires_at " + quoted_value(link.expires_at) + " is not a date-time");
  }
  return link;
}

}  // namespace hh::fetcher
