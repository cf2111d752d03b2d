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

namespace {

// FNV-1a over texts, each ended by a 0 byte (so that "ab","c" and "a","bc" differ).
class TextHash {
 public:
  void add(std::string_view text) {
    for (const char c : text) hash_ = (hash_ ^ static_cast<unsigned char>(c)) * 16777619u;
    hash_ *= 16777619u;
  }
  std::string hex() const {
    char text[9];
    std::snprintf(text, sizeof text, "%08x", hash_);
    return text;
  }

 private:
  uint32_t hash_ = 2166136261u;
};

// `rest` split at its first `fields` - 1 colons (the last field may hold colons).
std::optional<std::vector<std::string>> split_fields(std::string_view rest, size_t fields) {
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

}  // namespace

std::string cursor_kind(std::string_view family, const ApiTarget& target) {
  TextHash path;
  for (const std::string& segment : target.segments) path.add(segment);
  return std::string(family) + "." + path.hex();
}

std::string query_cursor_kind(std::string_view family, const ApiTarget& target, const QueryFilters& filters) {
  QueryFilters sorted = filters;
  std::sort(sorted.begin(), sorted.end());
  TextHash query;
  for (const auto& [name, value] : sorted) {
    query.add(name);
    query.add(value);
  }
  return cursor_kind(family, target) + "." + query.hex();
}

std::string_view cursor_refusal(std::string_view cursor, std::string_view kind) {
  const auto last_dot = kind.rfind('.');
  if (last_dot == std::string_view::npos || kind.find('.') == last_dot) return kBadCursor;  // no filters in it
  auto plain = decode_cursor(cursor);
  if (!plain) return kBadCursor;
  const std::string_view listing = kind.substr(0, last_dot + 1);  // "s1.<path>."
  // This listing's, but not this query's (one of this query that cursor_fields refused is malformed).
  const bool this_query = plain->starts_with(std::string(kind) + ":");
  return plain->starts_with(listing) && !this_query ? kOtherQueryCursor : kBadCursor;
}

std::optional<std::vector<std::string>> cursor_fields(std::string_view cursor, std::string_view kind, size_t fields) {
  auto plain = decode_cursor(cursor);
  if (!plain) return std::nullopt;
  // This kind, or one an earlier version made: the kind cut at one of its dots.
  std::string_view prefix = kind;
  std::string_view rest;
  for (;;) {
    if (plain->starts_with(prefix) && plain->size() > prefix.size() && (*plain)[prefix.size()] == ':') {
      rest = std::string_view(*plain).substr(prefix.size() + 1);
      break;
    }
    const auto dot = prefix.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    prefix = prefix.substr(0, dot);
  }
  return split_fields(rest, fields);
}

std::optional<std::vector<std::string>> combined_hash_cursor_fields(std::string_view cursor, std::string_view family,
                                                                    size_t fields) {
  auto plain = decode_cursor(cursor);
  if (!plain) return std::nullopt;
  const std::string_view text = *plain;
  constexpr size_t kHexDigits = 8;
  const size_t hash_at = family.size() + 1, colon_at = hash_at + kHexDigits;
  if (text.size() <= colon_at || !text.starts_with(family) || text[family.size()] != '.' || text[colon_at] != ':') {
    return std::nullopt;
  }
  for (const char c : text.substr(hash_at, kHexDigits)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  return split_fields(text.substr(colon_at + 1), fields);
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
