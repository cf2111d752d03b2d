#include "common/timestamp.h"

#include <charconv>
#include <chrono>

namespace hh {
namespace {

bool read_digits(std::string_view text, size_t& pos, size_t count, int& value) {
  if (pos + count > text.size()) return false;
  int v = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  value = v;
  pos += count;
  return true;
}

bool expect(std::string_view text, size_t& pos, char c) {
  if (pos < text.size() && text[pos] == c) {
    ++pos;
    return true;
  }
  return false;
}

unsigned days_in_month(int year, int month) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// The instants RFC 3339 writes in UTC (years 0000 to 9999), in Unix seconds: every time
// parsed lies in [kFirstSecond, kPastLastSecond), so it can be written back, and a range
// between two of them cannot overflow.
constexpr int64_t kFirstSecond = -62167219200;    // 0000-01-01T00:00:00Z
constexpr int64_t kPastLastSecond = 253402300800;  // 10000-01-01T00:00:00Z

}  // namespace

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<int64_t> parse_iso8601_ms(std::string_view text) {
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(text, pos, 4, year) || !expect(text, pos, '-') || !read_digits(text, pos, 2, month) ||
      !expect(text, pos, '-') || !read_digits(text, pos, 2, day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || static_cast<unsigned>(day) > days_in_month(year, month)) {
    return std::nullopt;
  }
  int64_t millis = 0;
  int offset_minutes = 0;
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ') return std::nullopt;
    ++pos;
    if (!read_digits(text, pos, 2, hour) || !expect(text, pos, ':') || !read_digits(text, pos, 2, minute)) {
      return std::nullopt;
    }
    if (expect(text, pos, ':')) {
      if (!read_digits(text, pos, 2, second)) return std::nullopt;
      if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
        ++pos;
        size_t digits = 0;
        int64_t scale = 100;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
          if (digits < 3) millis += (text[pos] - '0') * scale;
          scale /= 10;
          ++digits;
          ++pos;
        }
        if (digits == 0) return std::nullopt;
      }
    }
    if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
    // A leap second (60, as RFC 3339 allows) has no UTC instant of its own: it is taken as
    // the last millisecond of second 59, not folded into the next second, whose sample it
    // would replace (a reading lost without a word).
    if (second == 60) {
      second = 59;
      millis = 999;
    }
    if (pos < text.size()) {
      const char sign = text[pos];
      if (sign == 'Z' || sign == 'z') {
        ++pos;
      } else if (sign == '+' || sign == '-') {
        ++pos;
        int oh = 0, om = 0;
        if (!read_digits(text, pos, 2, oh)) return std::nullopt;
        if (expect(text, pos, ':')) {
          if (!read_digits(text, pos, 2, om)) return std::nullopt;
        } else if (pos < text.size()) {
          if (!read_digits(text, pos, 2, om)) return std::nullopt;
        }
        if (oh > 23 || om > 59) return std::nullopt;
        offset_minutes = (oh * 60 + om) * (sign == '-' ? -1 : 1);
      } else {
        return std::nullopt;
      }
    }
    if (pos != text.size()) return std::nullopt;
  }
  const int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - int64_t{offset_minutes} * 60;
  // An offset can carry 0000-01-01 or 9999-12-31 past the years RFC 3339 writes in UTC.
  if (seconds < kFirstSecond || seconds >= kPastLastSecond) return std::nullopt;
  return seconds * 1000 + millis;
}

void append_rfc3339_ms(std::string& out, int64_t utc_ms) {
  int64_t millis = utc_ms % 1000;
  int64_t seconds = utc_ms / 1000;
  if (millis < 0) {
    millis += 1000;
    seconds -= 1;
  }
  int64_t days = seconds / 86400;
  int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  // civil_from_days (Howard Hinnant).
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t year = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned day = doy - (153 * mp + 2) / 5 + 1;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  year += month <= 2;

  char buf[32];
  auto put = [&](char* p, int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) {
      p[i] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
  };
  const bool four_digits = year >= 0 && year <= 9999;
  if (!four_digits) {
    // Not RFC 3339, which has four digits: the year whole and signed, never wrapped.
    const std::string digits = std::to_string(year < 0 ? -year : year);
    out.push_back(year < 0 ? '-' : '+');
    if (digits.size() < 4) out.append(4 - digits.size(), '0');  // -0001, as ISO 8601 expands
    out.append(digits);
  }
  put(buf, four_digits ? year : 0, 4);
  buf[4] = '-';
  put(buf + 5, month, 2);
  buf[7] = '-';
  put(buf + 8, day, 2);
  buf[10] = 'T';
  put(buf + 11, rem / 3600, 2);
  buf[13] = ':';
  put(buf + 14, rem / 60 % 60, 2);
  buf[16] = ':';
  put(buf + 17, rem % 60, 2);
  buf[19] = '.';
  put(buf + 20, millis, 3);
  buf[23] = 'Z';
  if (four_digits) {
    out.append(buf, 24);
  } else {
    out.append(buf + 4, 20);  // the year is written above
  }
}

std::string format_rfc3339_ms(int64_t utc_ms) {
  std::string out;
  append_rfc3339_ms(out, utc_ms);
  return out;
}

std::optional<int64_t> parse_time_bound_ms(std::string_view text) {
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec == std::errc{} && end == text.data() + text.size()) {
    // Beyond ±292 million years the milliseconds overflowed int64 (found by
    // fuzz_timestamp), and a range between such bounds overflowed `end - start` (a
    // chart's buckets, the SQL's offsets).
    if (seconds < kFirstSecond || seconds >= kPastLastSecond) return std::nullopt;
    return seconds * 1000;
  }
  // Digits below the millisecond are dropped, as they are from every stored time: a bound
  // of 10:00:01.123456 is 10:00:01.123, so it finds the sample sent with that very time
  // (stored at .123), and `--since`/`--until` of 02.9995/03 are not an empty window.
  return parse_iso8601_ms(text);
}

std::string same_millisecond_note(int64_t start_ms, int64_t end_ms, std::string_view start_text,
                                  std::string_view end_text) {
  if (start_ms != end_ms || start_text == end_text) return {};
  return " (both are " + format_rfc3339_ms(start_ms) + " to the millisecond)";
}

int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace hh
