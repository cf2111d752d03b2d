#pragma once
// ISO 8601 / RFC 3339 timestamps <-> UTC instants in integer milliseconds.
// Written by hand: libstdc++ 12 has no std::chrono::parse, and the processor converts
// every sample's timestamp (hundreds of thousands per second), so this must not allocate.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hh {

// Parses "YYYY-MM-DD[T| ]HH:MM[:SS[.fraction]][Z|±HH:MM|±HHMM|±HH]" into UTC milliseconds
// since the Unix epoch. A missing offset means UTC (the service always sends one; hand-
// written captures may not). A date alone ("YYYY-MM-DD") is midnight UTC. Fractions
// beyond milliseconds are truncated. Returns nullopt for anything else, and for an
// instant outside the years 0000 to 9999 in UTC (9999-12-31T23:00:00-05:00).
std::optional<int64_t> parse_iso8601_ms(std::string_view text);

// Formats UTC milliseconds as RFC 3339 with millisecond precision and "Z",
// e.g. "2023-05-16T10:00:00.000Z".
std::string format_rfc3339_ms(int64_t utc_ms);
void append_rfc3339_ms(std::string& out, int64_t utc_ms);

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t days_from_civil(int64_t year, unsigned month, unsigned day);

// The system clock now, in UTC milliseconds since the Unix epoch.
int64_t unix_now_ms();

// For command-line and query bounds: RFC 3339, a date, or integer Unix seconds. Digits
// below the millisecond are dropped, as parse_iso8601_ms drops them from the stored times
// the bound is compared with: a bound equal to a sample's sent time finds that sample.
std::optional<int64_t> parse_time_bound_ms(std::string_view text);

// For refusing a window that is empty: " (both are 2024-05-16T10:00:02.999Z to the
// millisecond)" when two bounds written differently are one millisecond once cut (02.9995
// and 02.9999 look ordered), "" otherwise.
std::string same_millisecond_note(int64_t start_ms, int64_t end_ms, std::string_view start_text,
                                  std::string_view end_text);

}  // namespace hh
