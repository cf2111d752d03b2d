#include "cli/service_input.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fetcher/recovery_input.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "fetcher/calls/service_request.h"
#include "fetcher/service_values.h"

namespace hh::cli {
namespace {

constexpr size_t kMaxTimeZoneName = 64;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool looks_like_email(std::string_view id) {
  const size_t at = id.find('@');
  if (at == std::string_view::npos || at == 0 || at + 1 >= id.size()) return false;
  const std::string_view domain = id.substr(at + 1);
  const size_t dot = domain.find('.');
  return dot != std::string_view::npos && dot > 0 && dot + 1 < domain.size();
}

bool looks_like_phone(std::string_view id) {
  size_t digits = 0;
  bool separators = false;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (is_digit(c)) {
      ++digits;
    } else if (c == '+' && i == 0) {
      separators = true;
    } else if (c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/') {
      separators = true;
    } else {
      return false;  // a letter or anything else: not written like a number
    }
  }
  if (digits < 7 || digits > 15) return false;
  const bool national = id.front() == '0' && digits >= 9;
  return separators || national;
}

}  // namespace

Result<void> check_time_zone(std::string_view option, std::string_view name) {
  const std::string refused = std::string(option) + ": " + fetcher::quoted_value(name) + " is not a time zone of the tz database";
  if (name.empty() || name.size() > kMaxTimeZoneName || name.front() == '/' || name.back() == '/') {
    return fail(ErrorKind::data, refused + " (expected a name like Europe/Berlin)");
  }
  for (const char c : name) {
    const bool allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '/' || c == '_' ||
                         c == '-' || c == '+';
    if (!allowed) return fail(ErrorKind::data, refused + " (expected a name like Europe/Berlin)");
  }
  for (size_t start = 0; start <= name.size();) {
    const size_t slash = std::min(name.find('/', start), name.size());
    const std::string_view part = name.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return fail(ErrorKind::data, refused);
    start = slash + 1;
  }
  const char* tzdir = std::getenv("TZDIR");
  const std::filesystem::path file =
      std::filesystem::path(tzdir && *tzdir ? tzdir : "/usr/share/zoneinfo") / std::string(name);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return fail(ErrorKind::data, refused);
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {};
  if (!in.read(magic, sizeof magic) || std::string_view(magic, sizeof magic) != "TZif") {
    return fail(ErrorKind::data, refused);
  }
  return {};
}

Result<void> check_date(std::string_view option, std::string_view text) {
  if (auto parsed = fetcher::parse_date_option(option, text); !parsed) return fail(ErrorKind::data, parsed.error());
  return {};
}

namespace {

// In UTF-8 text: C0 and DEL; C1 (U+0080 to U+009F: C2 80 to C2 9F); the line and
// paragraph separators U+2028 and U+2029 (E2 80 A8, E2 80 A9). Each breaks a line or drives
// a terminal wherever the id is shown.
bool holds_control_character(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = [&](size_t at) { return at < text.size() ? static_cast<unsigned char>(text[at]) : 0u; };
    if (byte(i) < 0x20 || byte(i) == 0x7F) return true;
    if (byte(i) == 0xC2 && byte(i + 1) >= 0x80 && byte(i + 1) < 0xA0) return true;
    if (byte(i) == 0xE2 && byte(i + 1) == 0x80 && (byte(i + 2) == 0xA8 || byte(i + 2) == 0xA9)) return true;
  }
  return false;
}

}  // namespace

Result<void> check_client_user_id(std::string_view id) {
  if (id.empty()) return fail(ErrorKind::data, "--client-user-id: empty (use null to clear it)");
  // The service would store what JSON makes of it: bytes that are not UTF-8 as U+FFFD, a
  // different id than the one given.
  if (!json::is_valid_utf8(id)) return fail(ErrorKind::data, "--client-user-id: not valid UTF-8");
  if (holds_control_character(id)) {
    return fail(ErrorKind::data, "--client-user-id: holds a control character (a newline, a tab, …)");
  }
  if (looks_like_email(id)) {
    return fail(ErrorKind::data,
                "--client-user-id: looks like an e-mail address; the service forbids personal data there "
                "(use your own opaque id)");
  }
  if (looks_like_phone(id)) {
    return fail(ErrorKind::data,
                "--client-user-id: looks like a phone number; the service forbids personal data there "
                "(use your own opaque id)");
  }
  return {};
}

Result<int64_t> check_future_time(std::string_view option, std::string_view text, int64_t now_ms) {
  // parse_iso8601_ms also takes a bare date or no offset; a time with a zone is wanted here.
  const bool has_offset =
      text.size() > 10 && (text.back() == 'Z' || text.back() == 'z' || text.find_last_of("+-") > 10);
  const auto ms = parse_iso8601_ms(text);
  if (!ms || !has_offset) {
    return fail(ErrorKind::data, std::string(option) + ": expected a date-time with an offset, e.g. " +
                                     "2024-05-01T10:00:00Z, got " + fetcher::quoted_value(text));
  }
  if (*ms <= now_ms) return fail(ErrorKind::data, std::string(option) + ": " + fetcher::quoted_value(text) + " is not in the future");
  return *ms;
}

std::vector<std::string> split_list(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const std::string& value : values) {
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      if (comma > start) items.push_back(value.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return items;
}

Result<void> check_uuid_option(std::string_view option, std::string_view text) {
  if (!fetcher::is_uuid(text)) {
    return fail(ErrorKind::data, std::string(option) + ": " + fetcher::quoted_value(text) + " is not a UUID");
  }
  return {};
}

}  // namespace hh::cli
