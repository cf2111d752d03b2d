#include "api/page_support.h"

#include <algorithm>
#include <cstdio>

#include <charconv>

#include "common/json_writer.h"
#include "common/log.h"

namespace hh::api {

Page error_page(http::Status status, std::string_view message) {
  Page page{status, {}};
  json::ObjectWriter(page.body).string("error", message).close();
  return page;
}

Page bad_parameter(std::string_view message) { return error_page(http::Status::bad_request, message); }

Page database_error(std::string_view error, ErrorKind kind) {
  if (kind == ErrorKind::unavailable || kind == ErrorKind::busy) {
    log::warn("read_api_failed").str("error", error);
    return error_page(http::Status::service_unavailable,
                      kind == ErrorKind::busy ? "database busy; retry later" : "database unavailable; retry later");
  }
  log::error("read_api_failed").str("error", error);
  return error_page(http::Status::internal_server_error, "database error");
}

Result<int64_t> page_limit(const Params& params) {
  auto limit = params.integer("limit", 1, kMaxPageLimit);
  if (!limit) return fail(limit);
  return limit->value_or(kDefaultPageLimit);
}

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string cursor_kind(std::string_view family, const ApiTarget& target, bool with_filters) {
  uint32_t hash = 2166136261u;  // FNV-1a over the segments (and filters), each ended by a 0 byte
  const auto add = [&hash](std::string_view text) {
    for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
    hash *= 16777619u;
  };
  for (const std::string& segment : target.segments) add(segment);
  if (with_filters) {
    std::vector<std::pair<std::string, std::string>> filters;
    for (const auto& param : target.params) {
      if (param.first != "cursor" && param.first != "limit") filters.push_back(param);
    }
    std::sort(filters.begin(), filters.end());
    for (const auto& [name, value] : filters) {
      add(name);
      add(value);
    }
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  return std::string(family) + "." + hex;
}

std::optional<std::vector<std::string>> cursor_fields(std::string_view cursor, std::string_view kind, size_t fields) {
  auto plain = decode_cursor(cursor);
  if (!plain) return std::nullopt;
  const std::string_view family = kind.substr(0, kind.find('.'));
  std::string_view rest;
  if (plain->starts_with(std::string(kind) + ":")) {
    rest = std::string_view(*plain).substr(kind.size() + 1);
  } else if (plain->starts_with(std::string(family) + ":")) {  // made by an earlier version
    rest = std::string_view(*plain).substr(family.size() + 1);
  } else {
    return std::nullopt;
  }
  std::vector<std::string> parts;
  for (size_t i = 0; i + 1 < fields; ++i) {
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    parts.emplace_back(rest.substr(0, colon));
    rest.remove_prefix(colon + 1);
  }
  parts.emplace_back(rest);
  return parts;
}

std::string cursor_text(std::string_view kind, std::initializer_list<std::string_view> fields) {
  std::string text(kind);
  for (const std::string_view field : fields) {
    text.push_back(':');
    text.append(field);
  }
  return text;
}

void close_items(std::string& body, const std::optional<std::string>& next_cursor) {
  body.append("],\"next_cursor\":");
  if (next_cursor) {
    json::append_string(body, encode_cursor(*next_cursor));
  } else {
    body.append("null");
  }
  body.push_back('}');
}

}  // namespace hh::api
