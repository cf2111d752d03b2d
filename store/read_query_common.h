#pragma once
// What the read queries of every backend (store/read_store.h; written once in
// store/queries/, the sample queries in store/sqlite/queries/ and store/postgres/read/)
// share: rows assembled from result columns (the record tables' from their descriptions,
// store/schema/record_rows.h), change-feed keys split into key columns, where a
// time-ordered sample page resumes in each series, where a change page ends, and the errors
// they give. One copy, so that both backends hand out the same rows.
//
// Row readers are templates over a backend's current result row, `Columns`, which has
// column_is_null(i), column_text(i), column_optional_text(i), column_int(i),
// column_optional_int(i), column_optional_double(i), column_optional_bool(i) and
// column_blob(i) (sqlite::Statement has them; so has store/postgres/read/read_session.h's
// ResultRow). Each listing's SQL selects the columns in the order its reader takes them.
// Views stay valid as long as the backend's row does.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/read_rows.h"

namespace hh::store {

// ---- Errors every backend gives for the same misuse.

inline constexpr std::string_view kSamplePageNeedsUserAndResource =
    "a time-ordered sample query needs a user and a resource";
inline constexpr std::string_view kSummaryPageNeedsUserAndResource = "a summary page needs a user and a resource";
// One user's series of one resource: providers × source types. Far more means a mistake
// (or an attack on the read API), not data.
inline constexpr size_t kMaxMergedSeries = 1000;
std::string too_many_series_error();
std::string not_a_summary_key_error(std::string_view key);
std::string not_a_record_key_error(std::string_view key);

// ---- Change-feed keys (store/sqlite/migrations/002-derived.sql: key columns joined with '/').

inline constexpr size_t kMaxKeyParts = 5;
using KeyParts = std::array<std::string_view, kMaxKeyParts>;

// The first `parts` parts of `key`, split at '/'; the last part takes the rest (a key part
// may hold a '/' only there). None when `key` has fewer parts.
std::optional<KeyParts> split_change_key(std::string_view key, size_t parts);

// ---- Samples.

// Time-ordered pages: where series `series_id` resumes (its first t_ms) after `after` in
// (t_ms, series_id) order, not before `since_ms`. A series with a higher id than the
// position's may still have a sample at its t_ms, a lower or equal one only after it.
int64_t sample_resume_ms(int64_t series_id, int64_t since_ms, const std::optional<SamplePosition>& after);

// A series being merged into time order, with owned copies of its names and identity.
struct SeriesHead {
  int64_t series_id = 0;
  std::string user_id, resource, provider, source_type;
  std::optional<int64_t> source_id;
  std::optional<std::string> source_id_text, client_user_id, provider_name;

  // Sets the series fields of `row` (viewing this head).
  void name(StoredSample& row) const;
};

// What a sample query is reading: nothing, an export in series order, or pages merged
// into time order.
enum class SampleListing { idle, by_series, by_time };

// Of `heads` (series being merged, in series-id order), the one whose current sample comes
// first in (t_ms, series_id) order: the first of equal times has the lower id. None when no
// head has a sample left. `has_row(head)`, `t_ms(head)` read a head.
template <typename Head, typename HasRow, typename TimeOf>
std::optional<size_t> earliest_head(const std::vector<Head>& heads, HasRow has_row, TimeOf t_ms) {
  std::optional<size_t> best;
  int64_t best_t = 0;
  for (size_t i = 0; i < heads.size(); ++i) {
    if (!has_row(heads[i])) continue;
    const int64_t t = t_ms(heads[i]);
    if (!best || t < best_t) {
      best = i;
      best_t = t;
    }
  }
  return best;
}

// Series columns 0-4 (series_id, user_id, resource, provider, source_type) and 6-7
// (client_user_id, provider name) into `head`; column 5, source_id, is the backend's.
template <typename Columns>
void read_series_names(const Columns& s, SeriesHead& head) {
  head.series_id = s.column_int(0);
  head.user_id = s.column_text(1);
  head.resource = s.column_text(2);
  head.provider = s.column_text(3);
  head.source_type = s.column_text(4);
  const auto copy = [](std::optional<std::string_view> text) {
    return text ? std::optional<std::string>(*text) : std::nullopt;
  };
  head.client_user_id = copy(s.column_optional_text(6));
  head.provider_name = copy(s.column_optional_text(7));
}

// The same columns viewed in place (series_id … source_type, client_user_id, provider name).
template <typename Columns>
void read_series_row(const Columns& s, StoredSample& row) {
  row.series_id = s.column_int(0);
  row.user_id = s.column_text(1);
  row.resource = s.column_text(2);
  row.provider = s.column_text(3);
  row.source_type = s.column_text(4);
  row.client_user_id = s.column_optional_text(6);
  row.provider_name = s.column_optional_text(7);
}

// A sample's columns from `first` on: t_ms, timezone_offset, (value: the backend's, at
// first + 2), unit, type, start_ms, end_ms, systolic, diastolic, extra, seq.
template <typename Columns>
void read_sample_columns(const Columns& s, int first, StoredSample& row) {
  row.t_ms = s.column_int(first);
  row.timezone_offset = s.column_optional_int(first + 1);
  row.unit = s.column_optional_text(first + 3);
  row.type = s.column_optional_text(first + 4);
  row.start_ms = s.column_optional_int(first + 5);
  row.end_ms = s.column_optional_int(first + 6);
  row.systolic = s.column_optional_double(first + 7);
  row.diastolic = s.column_optional_double(first + 8);
  row.extra = s.column_optional_text(first + 9);
  row.seq = s.column_int(first + 10);
}

// ---- The change feed.

// "After the whole seq": the change id that every change of a seq is at or before.
inline constexpr int64_t kAfterWholeSeq = INT64_MAX;

// Where a change page ends (store/read_store.h, ChangeQuery): the last seq it reads, and
// whether it ends inside its first seq. `first_seq`: the first seq after the position
// (none: nothing to read); `seq_past_limit`: the seq of the change just past `limit` (none:
// the rest fits).
struct ChangePageEnd {
  int64_t last_seq = 0;
  bool ends_inside_seq = false;
};
ChangePageEnd change_page_end(int64_t after_seq, std::optional<int64_t> first_seq,
                              std::optional<int64_t> seq_past_limit);

// ---- Row readers: the listing's columns in the order of each reader.

// workout_id, idx, time, distance, heartrate, velocity_smooth, lat, lng, altitude, cadence,
// power, resistance, temperature.
template <typename Columns>
void read_stream_point(const Columns& s, StoredStreamPoint& row) {
  row.workout_id = s.column_text(0);
  row.idx = s.column_int(1);
  row.time = s.column_optional_int(2);
  row.distance = s.column_optional_double(3);
  row.heartrate = s.column_optional_double(4);
  row.velocity_smooth = s.column_optional_double(5);
  row.lat = s.column_optional_double(6);
  row.lng = s.column_optional_double(7);
  row.altitude = s.column_optional_double(8);
  row.cadence = s.column_optional_double(9);
  row.power = s.column_optional_double(10);
  row.resistance = s.column_optional_double(11);
  row.temperature = s.column_optional_double(12);
}

// workout_id, user_id, provider, provider_id, sport, point_count, seq, fetched_seq (owned copies).
template <typename Columns>
void read_workout_stream(const Columns& s, StoredWorkoutStream& row) {
  const auto copy = [&s](int column) -> std::optional<std::string> {
    if (s.column_is_null(column)) return std::nullopt;
    return std::string(s.column_text(column));
  };
  row.workout_id = std::string(s.column_text(0));
  row.user_id = copy(1);
  row.provider = copy(2);
  row.provider_id = copy(3);
  row.sport = copy(4);
  row.point_count = s.column_optional_int(5);
  row.seq = s.column_int(6);
  row.fetched_seq = s.column_optional_int(7);
}

// change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id.
template <typename Columns>
void read_change(const Columns& s, StoredChange& row) {
  row.change_id = s.column_int(0);
  row.seq = s.column_int(1);
  row.table_name = s.column_text(2);
  row.row_key = s.column_text(3);
  row.op = s.column_text(4);
  row.row_count = s.column_int(5);
  row.from_ms = s.column_optional_int(6);
  row.to_ms = s.column_optional_int(7);
  row.user_id = s.column_optional_text(8);
}

// seq, message_id, origin, received_at, webhook_timestamp, event_type, status, family,
// error, headers, body, body_removed_at, body_sha256.
template <typename Columns>
void read_delivery(const Columns& s, StoredDelivery& row) {
  row.seq = s.column_int(0);
  row.message_id = s.column_text(1);
  row.origin = s.column_text(2);
  row.received_at_ms = s.column_int(3);
  row.webhook_timestamp = s.column_optional_int(4);
  row.event_type = s.column_optional_text(5);
  row.status = s.column_optional_text(6);
  row.family = s.column_optional_text(7);
  row.error = s.column_optional_text(8);
  row.headers = s.column_text(9);
  row.body = s.column_blob(10);
  row.body_removed_at_ms = s.column_optional_int(11);
  row.body_sha256 = s.column_text(12);
  row.of_searched_users = true;  // the search by user says otherwise (queries/delivery_query.h)
}

// ---- Charts (ChartQuery), the same columns on both backends.

// resource, provider, source_type, first_ms, last_ms.
template <typename Columns>
void read_series(const Columns& s, StoredSeries& row) {
  row.resource = s.column_text(0);
  row.provider = s.column_text(1);
  row.source_type = s.column_text(2);
  row.first_ms = s.column_optional_int(3);
  row.last_ms = s.column_optional_int(4);
}

// resource, provider, source_type, count, first_start_ms, last_start_ms.
template <typename Columns>
void read_summary_kind(const Columns& s, StoredSummaryKind& row) {
  row.resource = s.column_text(0);
  row.provider = s.column_optional_text(1);
  row.source_type = s.column_text(2);
  row.count = s.column_int(3);
  row.first_start_ms = s.column_optional_int(4);
  row.last_start_ms = s.column_optional_int(5);
}

// provider, source_type, bucket, first_ms, last_ms, count, min, max, mean.
template <typename Columns>
void read_sample_bucket(const Columns& s, SampleBucket& row) {
  row.provider = s.column_text(0);
  row.source_type = s.column_text(1);
  row.bucket = s.column_int(2);
  row.first_ms = s.column_int(3);
  row.last_ms = s.column_int(4);
  row.count = s.column_int(5);
  row.min = s.column_optional_double(6).value_or(0);
  row.max = s.column_optional_double(7).value_or(0);
  row.mean = s.column_optional_double(8).value_or(0);
}

}  // namespace hh::store
