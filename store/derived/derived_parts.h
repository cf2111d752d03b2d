#pragma once
// What the derived-table writers of both backends (store/sqlite/derived/,
// store/postgres/derived/) share besides SQL: the outcome of a latest-wins write, a
// change-feed row, what a delivery did to a series, and the backend-neutral rules that
// decide keys, payloads and when a write can be skipped. Header-only and inline: the
// SQLite writer's hot path calls these per row, and must not pay a call across libraries
// for them.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/json_writer.h"
#include "rows/delivery_rows.h"
#include "store/jobs/backfill_job.h"

namespace hh::store {

enum class WriteOutcome { inserted, updated, stale };

// "insert" / "update" ("" for stale): the change feed's op of a written row.
inline std::string_view change_op(WriteOutcome outcome) {
  switch (outcome) {
    case WriteOutcome::inserted: return "insert";
    case WriteOutcome::updated: return "update";
    case WriteOutcome::stale: return "";
  }
  return "";
}

// One change-feed row (`changes`; the SQLite schema 002-derived.sql says what each op and
// key means).
struct Change {
  int64_t seq = 0;                 // the delivery that caused it
  std::string_view table;          // "summaries", "samples", …
  std::string_view row_key;
  std::string_view op;             // "insert", "update", "replace"
  int64_t row_count = 1;
  std::optional<int64_t> from_ms;  // samples only
  std::optional<int64_t> to_ms;
  // Whom the changed row is about (`purge-user` finds the feed's rows by it); none for a
  // row about nobody (providers).
  std::optional<std::string_view> user_id = std::nullopt;
};

// What one delivery did to one series.
struct SeriesChange {
  int64_t series_id = 0;
  const std::string* row_key = nullptr;  // "user/resource/provider/source_type", owned by the series cache
  size_t user_size = 0;                  // the user's length: the key's first part
  int64_t inserted = 0;
  int64_t updated = 0;
  int64_t from_ms = 0;                   // smallest / largest t_ms inserted or updated
  int64_t to_ms = 0;
};

// A fetched stream's effect: the workout_streams row and the points stored.
struct StreamReplaced {
  WriteOutcome stream_row = WriteOutcome::stale;  // inserted (no notice yet) or updated
  int64_t points = 0;                             // points stored (stale: 0, nothing written)
  // A slice before the stream's last (rows::StreamSlice): its points are stored, the
  // workout_streams row is not yet (stream_row says nothing).
  bool unfinished = false;
};

// users.last_seen_ms moves only to a received_at at least this far past the stored one
// (store/derived/user_table.h).
inline constexpr int64_t kLastSeenStepMs = 60 * 1000;

// The entry of `series_id` in `changes`, added (empty) when the delivery had none yet.
inline SeriesChange& series_change_of(std::vector<SeriesChange>& changes, int64_t series_id,
                                      const std::string* row_key, size_t user_size) {
  auto found = std::find_if(changes.begin(), changes.end(),
                            [&](const SeriesChange& c) { return c.series_id == series_id; });
  if (found != changes.end()) return *found;
  return changes.emplace_back(SeriesChange{series_id, row_key, user_size, 0, 0, INT64_MAX, INT64_MIN});
}

// Counts one sample written (inserted or replaced) at `t_ms`.
inline void note_sample(SeriesChange& change, int64_t t_ms, bool inserted) {
  ++(inserted ? change.inserted : change.updated);
  change.from_ms = std::min(change.from_ms, t_ms);
  change.to_ms = std::max(change.to_ms, t_ms);
}

// A sample with only the columns most samples have (value, unit, offset): a replacement by
// it sets the other columns to NULL, as a full one would with its NULLs.
inline bool is_plain_sample(const rows::SampleRow& sample) {
  return !sample.type && !sample.start_ms && !sample.end_ms && !sample.systolic && !sample.diastolic &&
         sample.extra_json.empty();
}

// Series ids by their four text parts, with the series' feed key and its source_id and
// app_id as last written. Forget them (clear()) when the transaction that created ids rolls back or
// `series` is emptied.
class SeriesIds {
 public:
  struct Series {
    int64_t id;
    std::string row_key;                           // "user/resource/provider/source_type"
    std::optional<rows::SampleValue> source_id;  // as last written here; nullopt: not known
    std::optional<std::string> app_id;             // as last written here; nullopt: not known
    // The newest sample time stored, as read and written here (INT64_MIN: none); nullopt:
    // not known. PostgreSQL inserts the samples after it without looking for them first
    // (pg_sample_writer.h).
    std::optional<int64_t> newest_t_ms;
  };

  // The cached series of `batch`, or nullptr; the batch's lookup key stays in this object
  // for add().
  Series* find(const rows::SampleBatch& batch) {
    lookup_key_.clear();
    append_part(lookup_key_, batch.user_id);
    append_part(lookup_key_, batch.resource);
    append_part(lookup_key_, batch.provider);
    append_part(lookup_key_, batch.source_type);
    auto found = ids_.find(lookup_key_);
    return found == ids_.end() ? nullptr : &found->second;
  }
  // Remembers the id of the batch last passed to find().
  Series& add(const rows::SampleBatch& batch, int64_t id) {
    std::string row_key;
    row_key.reserve(batch.user_id.size() + batch.resource.size() + batch.provider.size() + batch.source_type.size() +
                    3);
    row_key.append(batch.user_id).append("/").append(batch.resource).append("/").append(batch.provider);
    row_key.append("/").append(batch.source_type);
    auto [entry, _] =
        ids_.emplace(lookup_key_, Series{id, std::move(row_key), std::nullopt, std::nullopt, std::nullopt});
    return entry->second;
  }
  // True when `source_id` may differ from what the series holds (write it).
  static bool source_id_unknown(const Series& series, const rows::SampleValue& source_id) {
    return series.source_id != source_id;
  }
  // After writing `source_id`: a view must not outlive the parsed body, so a text id is
  // remembered as "not known".
  static void wrote_source_id(Series& series, const rows::SampleValue& source_id) {
    if (source_id.index() != 3) series.source_id = source_id;
  }
  // True when `app_id` (a source naming one) may differ from what the series holds.
  static bool app_id_unknown(const Series& series, std::string_view app_id) { return series.app_id != app_id; }
  static void wrote_app_id(Series& series, std::string_view app_id) { series.app_id = std::string(app_id); }
  void clear() { ids_.clear(); }

 private:
  // Each part with its length in front, so no separator can make two keys collide.
  static void append_part(std::string& key, std::string_view part) {
    const uint32_t size = static_cast<uint32_t>(part.size());
    key.append(reinterpret_cast<const char*>(&size), sizeof size);
    key.append(part);
  }
  std::unordered_map<std::string, Series> ids_;  // length-prefixed parts -> series
  std::string lookup_key_;                       // the last find()'s
};

// The users rows as stored (this transaction included), so that a user's deliveries that
// change nothing need no statement at all (store/derived/user_table.h).
class UserRows {
 public:
  struct Row {
    std::optional<std::string> client_user_id, team_id;
    int64_t first_seen_ms = 0, last_seen_ms = 0;
  };

  // True when the stored row is known and writing `identity` received at `received_at_ms`
  // would leave it as it is: a value the delivery does not carry, or carries as stored,
  // never changes a column (whichever the seqs), and the times change only outside
  // [first_seen, last_seen + step).
  bool changes_nothing(std::string_view user_id, const rows::Identity& identity, int64_t received_at_ms) {
    key_.assign(user_id);
    const auto cached = rows_.find(key_);
    if (cached == rows_.end()) return false;
    const Row& row = cached->second;
    const auto same = [](const std::optional<std::string_view>& carried, const std::optional<std::string>& stored) {
      return !carried || (stored && *carried == *stored);
    };
    return same(identity.client_user_id, row.client_user_id) && same(identity.team_id, row.team_id) &&
           received_at_ms >= row.first_seen_ms && received_at_ms < row.last_seen_ms + kLastSeenStepMs;
  }
  void remember(std::string_view user_id, Row row) {
    if (rows_.size() >= kMaxCachedRows) rows_.clear();  // then the cache starts over
    rows_[std::string(user_id)] = std::move(row);
  }
  void clear() { rows_.clear(); }

 private:
  static constexpr size_t kMaxCachedRows = 100000;
  std::unordered_map<std::string, Row> rows_;  // user_id -> the row as stored
  std::string key_;                            // reused
};

// The `jobs` contract shared with the fetcher (store/derived/follow_up_jobs.h).
inline BackfillWindow backfill_window(const rows::BackfillNotice& notice) {
  return BackfillWindow{notice.user_id, notice.resource, notice.provider, notice.start_ms, notice.end_ms, {}};
}

// A workout_stream job's payload: {"workout_id":…,"user_id":…,"provider":…}.
inline void workout_stream_job_payload(std::string& out, std::string_view workout_id,
                                       std::optional<std::string_view> user_id,
                                       std::optional<std::string_view> provider) {
  out.clear();
  json::ObjectWriter(out)
      .string("workout_id", workout_id)
      .optional_string("user_id", user_id)
      .optional_string("provider", provider)
      .close();
}

// A parsing_job job's payload: {"job_id":…,"user_id":…}; its key is the job id. The user
// (the webhook's) picks the team whose base URL and key fetch it.
inline void parsing_job_payload(std::string& out, std::string_view job_id, std::optional<std::string_view> user_id) {
  out.clear();
  json::ObjectWriter(out).string("job_id", job_id).optional_string("user_id", user_id).close();
}

}  // namespace hh::store
