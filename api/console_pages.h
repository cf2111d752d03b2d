#pragma once
// Read-API pages the console is a client of (docs/console.md), usable by any backend too:
//
//   GET /v1/deliveries?user_id=&client_user_id=&event_type=&status=&origin=&start=&end=&limit=&cursor=
//       {"items":[delivery…],"next_cursor":…,"scanned":n}   newest first, without headers or body
//   GET /v1/deliveries/{message_id}/changes
//       {"seq":…,"items":[change…],"truncated":bool}  the change-feed rows that delivery wrote
//                                                      (truncated: past 8 MiB, page_support.h)
//   GET /v1/users?client_user_id=   or   ?user_id=
//       {"items":[user…]}                             the users with that id (the backend's own id)
//   GET /v1/users/{user_id}/series
//       {"series":[{resource,provider,source_type,first,last}…],"summaries":[{resource,…,count}…]}
//   GET /v1/users/{user_id}/backfills
//       {"items":[backfill…]}                         the windows recorded or queued for the user
//   GET /v1/users/{user_id}/timeseries/{resource}/chart?start=&end=&buckets=&provider=&source_type=
//       {"start":…,"end":…,"bucket_ms":…,"series":[{"provider":…,"source_type":…,
//        "points":[[first_ms,count,min,max,mean,last_ms]…]}…]}
//
// Search by user: a row is the user's when the store records it as theirs, as `purge-user`
// finds a user's deliveries (store/delivery_users.h: the user columns of the outcome, the
// removed-body record and the change feed, a body only where none can say), so deliveries
// whose body retention removed are still found. A page reads at most
// kMaxScannedPerPage rows of the window (newest first): a page may then hold fewer than
// `limit` items with a next_cursor to go on; `scanned` says how many rows it read.
//
// Charts are downsampled here, never shipped whole: the range is cut into `buckets`
// (default kDefaultChartBuckets, at most kMaxChartBuckets) equal buckets, and each series
// gets one point per bucket that has samples, with their count, min, max and mean
// (store::ChartQuery). A bucket of one sample is that sample exactly.
#include <string>

#include "api/api_pages.h"

namespace hh::api {

inline constexpr int64_t kMaxScannedPerPage = 20000;
inline constexpr int64_t kDefaultChartBuckets = 600;
inline constexpr int64_t kMaxChartBuckets = 2000;

Page delivery_search_page(Reader& reader, const ApiTarget& target);
Page delivery_changes_page(Reader& reader, const std::string& message_id, const ApiTarget& target);
Page user_search_page(Reader& reader, const ApiTarget& target);
Page user_series_page(Reader& reader, const std::string& user_id, const ApiTarget& target);
Page user_backfills_page(Reader& reader, const std::string& user_id, const ApiTarget& target);
Page chart_page(Reader& reader, const std::string& user_id, const std::string& resource, const ApiTarget& target);

}  // namespace hh::api
