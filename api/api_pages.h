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
//   GET /v1/changes?after=<seq>&limit=   or   ?cursor=<next_cursor>&limit=
//       {"items":[change…],"next_after":<seq>,"next_cursor":"…"|null}   changes with seq > after
//   GET /v1/erasures?after=<erasure_id>&limit=
//       {"items":[{"erasure_id":…,"user_id":…,"erased_at_ms":…}…],"next_after":<erasure_id>}
//       the record of erasures (purge-user) with an id above `after`, in id order
//   GET /v1/deliveries/{message_id}
//       {"seq":…,"message_id":…,…,"headers":{…},"body":"…"|null,"body_base64":…|null}
//   GET /v1/users/{user_id}
//       {"user":{user}|null,"connections":[connection…],"devices":[device…],"truncated":bool}
//       404 when all empty; not paged, but cut as a page is (before the connection or device
//       that would pass kMaxPageBytes, the first kept whatever its size), truncated then true
//   GET /v1/users/{user_id}/orders?limit=&cursor=
//       {"items":[{"order_id":…,"order":{…}|null,"appointments":[…],"result":{…}|null}…],
//        "next_cursor":…}                              by order id
//
// start is inclusive, end exclusive (RFC 3339, a date, or Unix seconds). limit: default
// 1000, at most 10000, and exact: a page never holds more items. A page also stops before
// the item that would take its JSON past kMaxPageBytes (8 MiB: page_support.h), with its
// usual next cursor, so it may hold fewer than `limit` items though more follow; an item
// larger than that is a page alone. Rows use the field
// names of row_format.h; samples and summaries carry the identity fields (client_user_id,
// provider_name; samples also source_id). A page with next_cursor null (or a changes page
// with no items) is the last one for now. A cursor pages the listing that gave it, with the
// same filters (page_support.h); a parameter given empty is a 400 (api_request.h).
//
// The change feed's pages end at a seq boundary whenever they can (store/read_store.h). When
// one delivery made more than `limit` changes, a page ends inside its seq: next_after is
// then the seq before it and next_cursor goes on inside it; pass cursor= (not after=)
// until next_cursor is null again. A consumer that stores only next_after misses nothing.
// A change-feed page cut by bytes ends the same way: at the end of a seq, or inside its
// first seq (with next_cursor) when that seq alone passes the budget.
#include <string>

#include "api/api_request.h"
#include "api/reader_pool.h"
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
Page erasures_page(Reader& reader, const ApiTarget& target);
// `mask_signatures`: the console's view (signature header values masked: signature_masking.h).
Page delivery_page(Reader& reader, const std::string& message_id, const ApiTarget& target, bool mask_signatures);
Page user_page(Reader& reader, const std::string& user_id, const ApiTarget& target);
Page user_orders_page(Reader& reader, const std::string& user_id, const ApiTarget& target);

}  // namespace hh::api
