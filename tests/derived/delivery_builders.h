#pragma once
// Hand-built parsed deliveries (rows::DeliveryRows, the parser's output contract) for the
// derived writers' tests: the SQLite writer's own (derived_writer_test) and the comparison
// of both backends (tests/postgres/pg_derived_writer_test). Views point at literals or at
// strings the caller keeps alive.
#include <cstdint>
#include <string_view>
#include <vector>

#include "rows/delivery_rows.h"

namespace hh::test {

inline constexpr int64_t kReceivedAt = 1717200000000;  // 2024-06-01T00:00:00Z

inline rows::DeliveryRows sleep_summary(std::string_view id, std::string_view data) {
  rows::DeliveryRows d;
  d.family = rows::Family::summary;
  rows::SummaryRow& row = d.summaries.emplace_back();
  row.resource = "sleep";
  row.id = id;
  row.user_id = "u1";
  row.provider = "oura";
  row.source_type = "ring";
  row.calendar_date = "2024-05-16";
  row.start_ms = 1715900000000;
  row.end_ms = 1715930000000;
  row.data_json = data;
  return d;
}

inline rows::SampleRow heartrate(int64_t t_ms, int64_t bpm) {
  rows::SampleRow s;
  s.t_ms = t_ms;
  s.timezone_offset = 3600;
  s.value = bpm;
  s.unit = "bpm";
  return s;
}

inline rows::DeliveryRows samples(std::vector<rows::SampleRow> list, std::string_view user = "u1") {
  rows::DeliveryRows d;
  d.family = rows::Family::timeseries;
  rows::SampleBatch& batch = d.sample_batches.emplace_back();
  batch.user_id = user;
  batch.resource = "heartrate";
  batch.provider = "garmin";
  batch.source_type = "watch";
  batch.samples = std::move(list);
  return d;
}

inline rows::DeliveryRows stream_notice(std::string_view sport) {
  rows::DeliveryRows d;
  d.family = rows::Family::workout_stream;
  d.workout_stream = rows::WorkoutStreamNotice{"w1", "u1", "fitbit", "5127", sport};
  return d;
}

inline rows::DeliveryRows fetched_stream(std::string_view body, size_t points) {
  rows::DeliveryRows d;
  d.family = rows::Family::fetched_stream;
  d.fetched_stream = rows::FetchedStream{"w1", body, points};
  return d;
}

}  // namespace hh::test
