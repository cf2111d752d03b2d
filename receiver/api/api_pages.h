#pragma once
// The read API's pages (spec §7), each built from one Reader inside one read transaction
// (a consistent snapshot while the writer goes on):
//
//   GET /v1/users/{user_id}/timeseries/{resource}?start=&end=&provider=&source_type=&limit=&cursor=
//       {"items":[sample…],"next_cursor":"…"|null}   samples in time order (ties: series)
//   GET /v1/users/{user_id}/summaries/{resource}?start=&end=&provider=&source_type=&limit=&cursor=
//       {"items":[summary…],"next_cursor":…}          by start of period, then id
//   GET /v1/workouts/{workout_id}/stream?limit=&cursor=
//       {"workout":{…}|null,"items":[point…],"next_cursor":…}   points in stream order
//   GET /v1/changes?after=<seq>&limit=
//       {"items":[change…],"next_after":<seq>}       changes with seq > after (change_query.h)
//   GET /v1/deliveries/{message_id}
//       {"seq":…,"message_id":…,…,"headers":{…},"body":"…"|null,"body_base64":…|null}
//
// start is inclusive, end exclusive (RFC 3339, a date, or Unix seconds). limit: default
// 1000, at most 10000. Rows use the field names of row_format.h. A page with
// next_cursor null (or a changes page with no items) is the last one for now.
#include <string>

#include "receiver/api/api_request.h"
#include "receiver/api/reader_pool.h"
#include "receiver/http/http_types.h"

namespace hh::api {

inline constexpr int64_t kDefaultPageLimit = 1000;
inline constexpr int64_t kMaxPageLimit = 10000;

struct Page {
  http::Status status = http::Status::ok;
  std::string body;  // JSON
};

Page timeseries_page(Reader& reader, const std::string& user_id, const std::string& resource, const ApiTarget& target);
Page summaries_page(Reader& reader, const std::string& user_id, const std::string& resource, const ApiTarget& target);
Page stream_page(Reader& reader, const std::string& workout_id, const ApiTarget& target);
Page changes_page(Reader& reader, const ApiTarget& target);
Page delivery_page(Reader& reader, const std::string& message_id, const ApiTarget& target);

}  // namespace hh::api
