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

// The last instant RFC 3339 writes in UTC (9999-12-31T23:59:59.999Z): a window that would
// end after it (a backfill through 9999-12-31 ends at the next midnight) cannot be named.
inline constexpr int64_t kLastRfc3339Ms = 253'402'300'799'999;

// Formats UTC milliseconds as RFC 3339 with millisecond precision and "Z",
// e.g. "2023-05-16T10:00:00.000Z". A year RFC 3339 cannot write (before 0000, after 9999)
// is written whole with its sign ("+10000-01-01T00:00:00.000Z"), which no parser here
// reads back: never wrapped to another instant (10000 was written 0000, and a backfill
// through 9999-12-31 was queued as ending in year 0000). Callers keep the times they send
// or store within kLastRfc3339Ms.
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
