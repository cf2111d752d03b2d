#pragma once
// What every read-API page shares: error answers, `limit` and `cursor` parameters, and
// the paging loop that writes the items. (Each page reads inside one store::ReadSnapshot.)
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "api/api_pages.h"
#include "api/api_request.h"

namespace hh::api {

// {"error":"<message>"} with `status`.
Page error_page(http::Status status, std::string_view message);
// 400 naming the parameter ("limit: expected an integer from 1 to 10000, got \"0\"").
Page bad_parameter(std::string_view message);
// The answer to a read that failed, by the kind of its error (common/result.h); the error
// itself goes to the log only:
//   unavailable (the database cannot be reached, went away, or did not answer within its
//   reply timeout) and busy (locked past its wait, a statement cancelled by its timeout):
//   503, "database unavailable; retry later" or "database busy; retry later" (the read API
//   adds Retry-After, as the webhook path does); a retry later may pass;
//   anything else (a query fault, a damaged file): 500 "database error".
Page database_error(std::string_view error, ErrorKind kind);
template <typename T>
Page database_error(const Result<T>& failed) {
  return database_error(failed.error(), failed.error_kind());
}

inline constexpr std::string_view kBadCursor = "cursor: not a cursor of this listing";

// `limit`: kDefaultPageLimit when absent, at most kMaxPageLimit.
Result<int64_t> page_limit(const Params& params);

// An integer that is the whole of `text`.
std::optional<int64_t> parse_int(std::string_view text);

inline constexpr std::string_view kOtherQueryCursor = "cursor: issued for a different query";
// A workout stream's cursor issued before the stream was fetched again (or its workout
// erased): its index is a place in points that are no longer there (api_pages.cpp,
// stream_page).
inline constexpr std::string_view kStreamFetchedAgain =
    "cursor: the workout's stream was fetched again or erased since this cursor was issued; start again without a "
    "cursor";

// A listing's cursor kind: its family ("s1") and a hash of the path it pages, so that a
// cursor of one listing (u1's steps) is refused by another (u2's, or u1's heartrate)
// instead of starting it somewhere in the middle. (A mistake caught, not a lock: cursors
// are not secret.)
std::string cursor_kind(std::string_view family, const ApiTarget& target);

// The filters that choose a listing's items, by name, each as it was read (a time bound
// as UTC milliseconds, so that "2024-05-16" and "2024-05-16T00:00:00Z" are one query);
// absent ones left out.
using QueryFilters = std::vector<std::pair<std::string_view, std::string>>;

// The cursor kind of a listing with filters: cursor_kind's, then a hash of `filters`
// ("s1.<path>.<filters>"). Its position means nothing in a walk with other filters (a
// time and series of a provider's samples, asked of all providers', skips or repeats
// items), so such a cursor is refused (cursor_refusal: kOtherQueryCursor); a client
// repeats the filters with every page.
std::string query_cursor_kind(std::string_view family, const ApiTarget& target, const QueryFilters& filters);

// The 400 message for a cursor that cursor_fields refused for `kind`: kOtherQueryCursor
// when it is this listing's, issued with other filters, else kBadCursor.
std::string_view cursor_refusal(std::string_view cursor, std::string_view kind);

// The plain text behind a cursor of `kind` ("s1.<hash>…:…"), split at the first `fields`
// - 1 colons (the last field may hold colons); nullopt when it is not such a cursor. A
// cursor an earlier version made, of a kind that `kind` starts with ("s1:…" before kinds
// had a hash, "s1.<path>:…" before they held the filters), still pages.
std::optional<std::vector<std::string>> cursor_fields(std::string_view cursor, std::string_view kind, size_t fields);

// A cursor of `family` in the shape one earlier version gave searches:
// "<family>.<8 hex digits>:…", one hash of the path and the filters as written. Neither
// can be told from it (the filters may be written another way now), so it pages whatever
// filters come with it, as an old "s1:…" does. Fields as cursor_fields'.
std::optional<std::vector<std::string>> combined_hash_cursor_fields(std::string_view cursor, std::string_view family,
                                                                    size_t fields);

// The plain text of a cursor of `kind` holding `fields` (cursor_fields' inverse):
// "<kind>:<field>:<field>…".
std::string cursor_text(std::string_view kind, std::initializer_list<std::string_view> fields);

// A page's byte budget: a listing stops adding items once its JSON would pass this, and
// hands out its usual next cursor, so that a page (built whole in memory, then sent) costs
// about this much whatever `limit` and the rows' sizes are (10,000 summaries of a few MiB
// each made pages of tens of GB). Twice the default max_body_bytes, so a page holds at
// least two of the largest items the default receiver stores, and far above what 10,000
// ordinary rows take (a sample or a change: a few hundred bytes). A single item larger than
// the budget is a page alone (paging always moves on).
inline constexpr size_t kMaxPageBytes = size_t{8} * 1024 * 1024;

// The paging loop of every listing: reads rows with `next(row)` (Result<bool>) until
// there are none, one is past `limit`, or the next would take `body` past kMaxPageBytes,
// and appends the others to `body` with `write(body, row)`, comma-separated (at least
// one). Returns the plain cursor of the last row written, `cursor_of(row)`, when a row was
// left for the next page, else nullopt. The query behind `next` must offer at least
// limit + 1 rows when more exist.
template <typename Row, typename Next, typename Write, typename CursorOf>
Result<std::optional<std::string>> page_items(Row& row, int64_t limit, std::string& body, Next&& next, Write&& write,
                                              CursorOf&& cursor_of) {
  int64_t count = 0;
  std::string last_cursor;
  for (;;) {
    auto has_row = next(row);
    if (!has_row) return fail(has_row);
    if (!*has_row) return std::optional<std::string>{};
    if (count == limit || (count > 0 && body.size() >= kMaxPageBytes)) {
      return std::optional<std::string>{std::move(last_cursor)};
    }
    const size_t before = body.size();
    if (count > 0) body.push_back(',');
    write(body, row);
    if (count > 0 && body.size() > kMaxPageBytes) {  // this row starts the next page
      body.resize(before);
      return std::optional<std::string>{std::move(last_cursor)};
    }
    ++count;
    last_cursor = cursor_of(row);
  }
}

// Ends a listing: `],"next_cursor":"<encoded>"|null}`.
void close_items(std::string& body, const std::optional<std::string>& next_cursor);

}  // namespace hh::api
