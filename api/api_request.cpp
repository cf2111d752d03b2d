#include "api/api_request.h"

#include <boost/url/parse.hpp>
#include <charconv>

#include "common/base64.h"
#include "common/timestamp.h"

namespace hh::api {

Result<ApiTarget> parse_target(std::string_view target) {
  auto url = boost::urls::parse_origin_form(target);
  if (!url) return fail("malformed request target");
  ApiTarget parsed;
  for (auto segment : url->segments()) parsed.segments.push_back(segment);
  // '+' is a plus sign, not a space: times like 2024-05-16T10:00:00+02:00 arrive unescaped.
  for (auto param : url->params(boost::urls::encoding_opts(false, false, false))) {
    // An empty query ("/v1/changes?") or separators in a row ("?a=1&&b=2"), as URL
    // builders write them: nothing, not a parameter named ''.
    if (param.key.empty() && !param.has_value) continue;
    parsed.params.emplace_back(param.key, param.has_value ? param.value : "");
  }
  // No id or value the store keeps holds U+0000, and PostgreSQL would cut a parameter short
  // there (answering for "abc" when asked for "abc%00x"): refused alike on both backends.
  const auto holds_nul = [](std::string_view text) { return text.find('\0') != std::string_view::npos; };
  for (const auto& segment : parsed.segments) {
    if (holds_nul(segment)) return fail("a path segment holds %00 (U+0000)");
    // No user, resource or id is empty: "/v1/users/u1/timeseries/" names none.
    if (segment.empty()) return fail("a path segment is empty (a trailing '/' or '//')");
  }
  for (const auto& [key, value] : parsed.params) {
    if (holds_nul(key) || holds_nul(value)) return fail("parameter '" + key.substr(0, key.find('\0')) + "' holds %00 (U+0000)");
  }
  return parsed;
}

Params::Params(const ApiTarget& target, std::initializer_list<std::string_view> allowed) : target_(target) {
  for (size_t i = 0; i < target.params.size(); ++i) {
    const std::string& name = target.params[i].first;
    bool known = false;
    for (auto a : allowed) known = known || a == name;
    if (!known) {
      error_ = "unknown parameter '" + name + "'";
      return;
    }
    for (size_t j = 0; j < i; ++j) {
      if (target.params[j].first == name) {
        error_ = name + ": given twice";
        return;
      }
    }
    // No parameter means anything when empty: `provider=` matched no row (nothing is
    // stored with an empty provider), `start=` read as no bound, a blank form field as a
    // filter the client did not mean. A clear 400 instead, on every route alike.
    if (target.params[i].second.empty()) {
      error_ = name + ": empty value";
      return;
    }
  }
}

std::optional<std::string_view> Params::text(std::string_view name) const {
  for (const auto& [key, value] : target_.params) {
    if (key == name) return std::string_view(value);
  }
  return std::nullopt;
}

Result<std::optional<int64_t>> Params::time_ms(std::string_view name) const {
  auto value = text(name);
  if (!value) return std::optional<int64_t>{};
  auto ms = parse_time_bound_ms(*value);
  if (!ms) {
    return fail(std::string(name) + ": expected RFC 3339, a date or Unix seconds, got \"" +
                std::string(value->substr(0, 64)) + "\"");
  }
  return std::optional<int64_t>{*ms};
}

Result<Params::Window> Params::window() const {
  auto start = time_ms("start");
  if (!start) return fail(start);
  auto end = time_ms("end");
  if (!end) return fail(end);
  if (*start && *end && **end <= **start) {
    return fail("start and end: start is not before end" +
                same_millisecond_note(**start, **end, text("start").value_or(""), text("end").value_or("")));
  }
  return Window{*start, *end};
}

Result<std::optional<int64_t>> Params::integer(std::string_view name, int64_t min, int64_t max) const {
  auto value = text(name);
  if (!value) return std::optional<int64_t>{};
  int64_t number = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), number);
  if (value->empty() || ec != std::errc{} || end != value->data() + value->size() || number < min || number > max) {
    return fail(std::string(name) + ": expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                ", got \"" + std::string(value->substr(0, 64)) + "\"");
  }
  return std::optional<int64_t>{number};
}

std::string encode_cursor(std::string_view plain) {
  std::string text = base64_encode(plain);
  while (!text.empty() && text.back() == '=') text.pop_back();
  for (auto& c : text) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return text;
}

std::optional<std::string> decode_cursor(std::string_view cursor) {
  std::string text(cursor);
  for (auto& c : text) {
    if (c == '-') c = '+';
    else if (c == '_') c = '/';
    else if (c == '+' || c == '/' || c == '=') return std::nullopt;  // not base64url
  }
  while (text.size() % 4 != 0) text.push_back('=');
  return base64_decode(text);
}

}  // namespace hh::api
