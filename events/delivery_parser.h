#pragma once
// Classifies and parses one inbox row into rows::DeliveryRows (rows/delivery_rows.h).
//
// Contract: never throws on input and never crashes; every problem is a Status::invalid
// result whose error names the field ("data.data[3].timestamp: not an ISO 8601 time").
// A delivery is parsed completely before anything is applied, so an invalid one applies
// nothing. Unknown fields are kept (summary JSON whole, sample extras in extra_json);
// unknown enum values are kept as text; missing optional fields are nullopt.
//
// One DeliveryParser per thread, reused: it owns the simdjson parser and buffers.
#include <memory>
#include <string>
#include <string_view>

#include "events/parse_limits.h"
#include "rows/delivery_rows.h"

namespace hh::events {

struct ParseResult {
  rows::Status status = rows::Status::processed;
  rows::Family family = rows::Family::other;
  std::string error;  // set when status == invalid
};

// Fetched rows (origin "fetch") carry their context in rows::InboxRow::headers_json:
//   {"kind":"workout_stream","workout_id":"…","user_id":"…","provider":"…","url":"…"}
//   {"kind":"summaries","resource":"sleep","user_id":"…","provider":"…","url":"…"}
//   {"kind":"summaries","resource":"meal","items_key":"meals",…}   (the list's member, when not the resource)
//   {"kind":"summary","resource":"profile","user_id":"…","provider":"…","url":"…"}  (one object)
//   {"kind":"timeseries","resource":"heartrate","user_id":"…","provider":"…","url":"…"}
//   {"kind":"workouts_for_streams","user_id":"…","provider":"…","url":"…"}
//   {"kind":"providers","url":"…"}                                 (body: a JSON array)
//   {"kind":"parsing_job","job_id":"…","user_id":"…","url":"…"}    (body: the ParsingJob object)
//   {"kind":"deregistration","user_id":"…","provider":"…","deregistered_at":"<RFC 3339>","url":"…"}
//                                                   (body: the service's {"success":true}; stored by `user deregister`)
// and event_type "fetch.<kind>[.<resource>]".

class DeliveryParser {
 public:
  DeliveryParser();
  explicit DeliveryParser(const ParseLimits& limits);  // tests use small limits
  ~DeliveryParser();
  DeliveryParser(const DeliveryParser&) = delete;
  DeliveryParser& operator=(const DeliveryParser&) = delete;

  // Parses `row` into `out` (cleared first).
  ParseResult parse(const rows::InboxRow& row, rows::DeliveryRows& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A ParseResult's error without the excerpt of the body it may end with ("…: not an ISO
// 8601 time \"<the text sent>\""): what a log line may carry (logs never hold a body's
// content; the inbox row keeps the whole error for the read API and the console).
std::string_view without_excerpt(std::string_view error);

}  // namespace hh::events
