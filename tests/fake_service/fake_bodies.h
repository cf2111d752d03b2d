#pragma once
// Response bodies of the fake service, shaped like the real ones (reference notes §2-3),
// generated deterministically from the request so tests can predict them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hh::fake {

// GET /v2/timeseries/workouts/{id}/stream: parallel arrays (time in Unix seconds,
// distance, heartrate with a null every 97th point, velocity_smooth, lat, lng, altitude,
// cadence, power; resistance empty, temperature null), `points` long. About 59 bytes per
// point: 520,000 points are a 30 MB body.
std::string stream_body(size_t points);

// `input` as one gzip member (what a server sends with Content-Encoding: gzip). `level`:
// zlib's 0-9, -1 its default.
std::string gzip(const std::string& input, int level = -1);

// GET /v2/summary/{resource}/{user_id}: {"<resource>": [...]} with one summary per UTC day
// starting in [start_ms, end_ms) (at most `max_items`), ids stable per (resource, user, day).
// The list's member is the service's (reference notes §3.1): "meals" for meal, whose
// items have the members of ClientFacingMeal.
std::string summaries_body(std::string_view resource, std::string_view user_id, std::string_view provider,
                           int64_t start_ms, int64_t end_ms, size_t max_items);
// The member summaries_body puts the list under.
std::string_view summaries_key(std::string_view resource);
// GET /v2/summary/profile/{user_id}?provider=: ONE ClientFacingProfile object, no window
// and no list (reference notes §3.1); its id is stable per user and provider.
std::string profile_body(std::string_view user_id, std::string_view provider);
std::string profile_id(std::string_view user_id, std::string_view provider);
// GET /v2/providers: a JSON array of Provider objects (service interface: name, slug,
// description, logo, auth_type, supported_resources), the same every time.
std::string providers_body();
// The id the summary of `day_ms` gets in summaries_body.
std::string summary_id(std::string_view resource, std::string_view user_id, int64_t day_ms);

// GET /v2/timeseries/{user_id}/{resource}/grouped: page `page` (0-based) of `pages`, each
// with `per_page` samples of one source, spread over [start_ms, end_ms); next_cursor is
// the opaque cursor of the next page, or null on the last (with `last_points_to`, a lying
// service's: that page's cursor again).
std::string grouped_body(std::string_view resource, std::string_view provider, int64_t start_ms, int64_t end_ms,
                         size_t page, size_t pages, size_t per_page, std::optional<size_t> last_points_to = {});
// Opaque cursors, like the service's base64 {"offset":N}.
std::string make_cursor(size_t page);
// The page a cursor names; SIZE_MAX when it is not one of ours.
size_t parse_cursor(std::string_view cursor);

// `ms` (UTC) as the service writes times: "2024-08-04T06:00:00+00:00".
std::string service_time(int64_t ms);

// The timestamp of sample `index` (0-based over all pages) in grouped_body, UTC ms.
int64_t sample_time_ms(int64_t start_ms, int64_t end_ms, size_t index, size_t total);

}  // namespace hh::fake
