#include "store/database_location.h"

#include <filesystem>

namespace hh::store {
namespace {

// The scheme of a URI (RFC 3986 §3.1: a letter, then letters, digits, + - .), followed
// by "://"; empty when `text` is not such a URI.
std::string_view uri_scheme(std::string_view text) {
  const auto end = text.find("://");
  if (end == std::string_view::npos || end == 0) return {};
  const std::string_view scheme = text.substr(0, end);
  const auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!is_alpha(scheme[0])) return {};
  for (char c : scheme) {
    if (!is_alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return {};
  }
  return scheme;
}

}  // namespace

Result<DatabaseKind> database_kind(std::string_view database) {
  const std::string_view scheme = uri_scheme(database);
  if (scheme.empty()) return DatabaseKind::sqlite_file;
  if (scheme == "postgresql" || scheme == "postgres") return DatabaseKind::postgresql;
  return fail(ErrorKind::unavailable, "database: unknown scheme \"" + std::string(scheme) +
              "://\" (expected a SQLite file path or a postgresql:// URI)");
}

std::string loggable_location(std::string_view database) {
  std::string shown(database);
  if (uri_scheme(database).empty()) return shown;
  // postgresql://user:secret@host/… : the userinfo ends at the first '@' before the path.
  const size_t start = shown.find("://") + 3;
  const size_t path = shown.find_first_of("/?", start);
  const size_t at = shown.rfind('@', path == std::string::npos ? std::string::npos : path);
  if (at != std::string::npos && at > start) {
    const size_t colon = shown.find(':', start);
    if (colon != std::string::npos && colon < at) shown.replace(colon + 1, at - colon - 1, "***");
  }
  // …?password=secret&… (a libpq URI parameter).
  for (size_t key = shown.find("password="); key != std::string::npos; key = shown.find("password=", key + 1)) {
    if (key == 0 || (shown[key - 1] != '?' && shown[key - 1] != '&')) continue;
    const size_t value = key + 9;
    const size_t end = shown.find('&', value);
    shown.replace(value, (end == std::string::npos ? shown.size() : end) - value, "***");
  }
  return shown;
}

bool names_missing_file(const std::string& database) {
  auto kind = database_kind(database);
  if (!kind || *kind != DatabaseKind::sqlite_file) return false;
  std::error_code ec;
  return !std::filesystem::exists(database, ec);
}

Error no_backend(DatabaseKind kind) {
  const std::string_view name = kind == DatabaseKind::postgresql ? "PostgreSQL (postgresql://…)" : "SQLite";
  return fail(ErrorKind::unavailable, "database: this part of healthhook does not run on " + std::string(name) + " yet");
}

}  // namespace hh::store
