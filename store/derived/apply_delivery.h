#pragma once
// Which rows of one parsed delivery (rows::DeliveryRows) go to which derived table, the
// change-feed rows that record it, the counts (ApplyCounts) and the follow-up jobs it
// queues: the same for every backend, so written once here over each backend's parts.
// A template, not an interface: the SQLite writer calls its parts per row on its hottest
// path, where a virtual call each would cost; instantiated, this is the code it had.
//
// Each backend provides (store/sqlite/derived/, store/postgres/derived/):
//   Records  write(const <Row>&, seq) -> Result<WriteOutcome> for every one-row-per-key table
//   Users    write(const rows::Identity&, seq, received_at_ms) -> Result<WriteOutcome>
//   Samples  write(const rows::SampleBatch&, seq, std::vector<SeriesChange>&) -> Result<int64_t>
//   Streams  write_notice(notice, seq) -> Result<WriteOutcome>;
//            replace_points(stream, seq) -> Result<StreamReplaced>, an error starting "stream: "
//            when the body cannot be read (the delivery's fault)
//   Jobs     queue_workout_stream(workout_id, user_id, provider, seq, now_ms) -> Result<bool>;
//            queue_backfill(notice, seq, now_ms) -> Result<bool>;
//            queue_parsing_job(job_id, user_id, seq, now_ms) -> Result<bool>
// Records also takes write(const rows::DeregistrationRow&, seq): it marks the connection
// row and keeps its other fields.
//   Feed     append(const Change&) -> Result<void>
// Errors keep the kind the part gave them; the prefix names the table.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/processing_store.h"

namespace hh::store {

template <typename Records, typename Users, typename Samples, typename Streams, typename Jobs, typename Feed>
class DeliveryApplier {
 public:
  DeliveryApplier(Records& records, Users& users, Samples& samples, Streams& streams, Jobs& jobs, Feed& feed,
                  std::vector<SeriesChange>& series_changes, std::string& key)
      : records_(records),
        users_(users),
        samples_(samples),
        streams_(streams),
        jobs_(jobs),
        feed_(feed),
        series_changes_(series_changes),
        key_(key) {}

  // Applies `rows` of the delivery `seq`; on failure some rows may be written.
  Result<void> apply(const rows::DeliveryRows& rows, int64_t seq, int64_t received_at_ms, ApplyCounts& counts);

  // After a failed apply(): whether a fetched stream's body could not be read.
  bool malformed_stream() const { return malformed_stream_; }

 private:
  // A change without a time range (everything but samples), about `user`.
  static Change change(int64_t seq, std::string_view table, std::string_view key, std::string_view op,
                       std::optional<std::string_view> user, int64_t row_count = 1) {
    return Change{seq, table, key, op, row_count, std::nullopt, std::nullopt, user};
  }
  // A row's user, else (a row that names none) the delivery's: every change but a provider
  // list's names whom it is about (spec §11).
  static std::optional<std::string_view> user_of(std::optional<std::string_view> row_user,
                                                 const rows::DeliveryRows& rows) {
    return row_user && !row_user->empty() ? row_user : rows.delivery_user;
  }
  std::string_view joined(std::string_view a, std::string_view b) {
    key_.assign(a).append("/").append(b);
    return key_;
  }
  // Records a record-table write in the feed ("table", key, about `user`) unless it was stale.
  Result<void> note(Result<WriteOutcome> outcome, std::string_view table, std::string_view key, int64_t seq,
                    std::optional<std::string_view> user, ApplyCounts& counts) {
    if (!outcome) return fail(outcome, table);
    ++counts.rows_seen;
    if (*outcome == WriteOutcome::stale) return {};
    ++counts.rows_written;
    return feed_.append(change(seq, table, key, change_op(*outcome), user));
  }
  Result<void> queued(Result<bool> result, ApplyCounts& counts) {
    if (!result) return fail(result, "jobs");
    counts.jobs_queued += *result ? 1 : 0;
    return {};
  }

  Records& records_;
  Users& users_;
  Samples& samples_;
  Streams& streams_;
  Jobs& jobs_;
  Feed& feed_;
  std::vector<SeriesChange>& series_changes_;  // reused per delivery
  std::string& key_;                           // reused
  bool malformed_stream_ = false;
};

template <typename Records, typename Users, typename Samples, typename Streams, typename Jobs, typename Feed>
Result<void> DeliveryApplier<Records, Users, Samples, Streams, Jobs, Feed>::apply(const rows::DeliveryRows& rows,
                                                                                  int64_t seq, int64_t received_at_ms,
                                                                                  ApplyCounts& counts) {
  malformed_stream_ = false;
  // Who the delivery is about: bookkeeping of every delivery, not one of its rows, so it
  // counts neither towards a step's size nor towards the rows applied.
  if (const auto& user_id = rows.identity.user_id) {
    auto written = users_.write(rows.identity, seq, received_at_ms);
    if (!written) return fail(written, "users");
    if (*written != WriteOutcome::stale) {
      if (auto r = feed_.append(change(seq, "users", *user_id, change_op(*written), *user_id)); !r) return r;
    }
  }
  for (const rows::SummaryRow& row : rows.summaries) {
    if (auto r = note(records_.write(row, seq), "summaries", joined(row.resource, row.id), seq,
                      user_of(row.user_id, rows), counts);
        !r) {
      return r;
    }
  }

  if (!rows.sample_batches.empty()) {
    series_changes_.clear();
    for (const rows::SampleBatch& batch : rows.sample_batches) {
      auto written = samples_.write(batch, seq, series_changes_);
      if (!written) return fail(written, "samples");
      counts.rows_seen += static_cast<int64_t>(batch.samples.size());
      counts.samples_written += *written;
      counts.rows_written += *written;
    }
    for (const SeriesChange& c : series_changes_) {
      const int64_t count = c.inserted + c.updated;
      if (count == 0) continue;
      auto appended = feed_.append(Change{seq, "samples", *c.row_key, c.updated == 0 ? "insert" : "update", count,
                                          c.from_ms, c.to_ms, std::string_view(*c.row_key).substr(0, c.user_size)});
      if (!appended) return appended;
    }
  }

  if (const auto& notice = rows.workout_stream) {
    const auto user = user_of(notice->user_id, rows);
    if (auto r = note(streams_.write_notice(*notice, seq), "workout_streams", notice->workout_id, seq, user, counts);
        !r) {
      return r;
    }
    auto r = queued(jobs_.queue_workout_stream(notice->workout_id, user, notice->provider, seq, received_at_ms),
                    counts);
    if (!r) return r;
  }

  if (const auto& notice = rows.backfill) {
    backfill_job_key(key_, backfill_window(*notice));  // also the backfills row's feed key
    if (auto r = note(records_.write(*notice, seq), "backfills", key_, seq, notice->user_id, counts); !r) return r;
    if (auto r = queued(jobs_.queue_backfill(*notice, seq, received_at_ms), counts); !r) return r;
  }

  if (const auto& row = rows.connection) {
    if (auto r = note(records_.write(*row, seq), "connections", joined(row->user_id, row->provider), seq,
                      row->user_id, counts);
        !r) {
      return r;
    }
  }
  if (const auto& row = rows.device) {
    if (auto r = note(records_.write(*row, seq), "devices", row->id, seq, user_of(row->user_id, rows), counts); !r) {
      return r;
    }
  }
  if (const auto& row = rows.lab_order) {
    if (auto r = note(records_.write(*row, seq), "lab_orders", row->id, seq, user_of(row->user_id, rows), counts);
        !r) {
      return r;
    }
  }
  if (const auto& row = rows.lab_appointment) {
    if (auto r = note(records_.write(*row, seq), "lab_appointments", row->id, seq, user_of(row->user_id, rows),
                      counts);
        !r) {
      return r;
    }
  }
  if (const auto& row = rows.lab_result) {
    if (auto r = note(records_.write(*row, seq), "lab_results", row->order_id, seq, user_of(row->user_id, rows),
                      counts);
        !r) {
      return r;
    }
  }
  if (const auto& row = rows.lab_parsing_job) {
    if (auto r = note(records_.write(*row, seq), "lab_parsing_jobs", row->id, seq, user_of(row->user_id, rows),
                      counts);
        !r) {
      return r;
    }
    // A webhook that says `completed` without results: fetch the job (its results) from
    // GET /lab_report/v1/parser/job/{id}. Never for a fetched job, whatever it holds.
    if (rows.family == rows::Family::lab_parsing_job && row->status == "completed" && !row->results_json) {
      auto r = queued(jobs_.queue_parsing_job(row->id, rows.identity.user_id, seq, received_at_ms), counts);
      if (!r) return r;
    }
  }
  if (const auto& row = rows.deregistration) {
    if (auto r = note(records_.write(*row, seq), "connections", joined(row->user_id, row->provider), seq, row->user_id,
                      counts);
        !r) {
      return r;
    }
  }

  if (const auto& stream = rows.fetched_stream) {
    auto replaced = streams_.replace_points(*stream, seq);
    if (!replaced) {
      malformed_stream_ = replaced.error().starts_with("stream: ");
      return fail(replaced, "stream_points");
    }
    // A slice (rows::StreamSlice) counts its own points; the row and the feed's changes
    // come with the last one.
    const rows::StreamSlice* slice = stream->slice;
    const auto points_here = static_cast<int64_t>(slice ? slice->end - slice->first : stream->point_count);
    counts.rows_seen += points_here + (replaced->unfinished ? 0 : 1);
    if (replaced->unfinished) {
      counts.unfinished = true;
      counts.rows_written += replaced->points;
    } else if (replaced->stream_row != WriteOutcome::stale) {
      counts.rows_written += (slice ? points_here : replaced->points) + 1;
      const auto user = user_of(stream->user_id, rows);
      if (auto r = feed_.append(
              change(seq, "workout_streams", stream->workout_id, change_op(replaced->stream_row), user));
          !r) {
        return r;
      }
      if (auto r = feed_.append(change(seq, "stream_points", stream->workout_id, "replace", user, replaced->points));
          !r) {
        return r;
      }
    }
  }

  for (const rows::ProviderRow& row : rows.providers) {
    if (auto r = note(records_.write(row, seq), "providers", row.slug, seq, std::nullopt, counts); !r) return r;
  }

  // A workouts page fetched for a backfill of streams: one stream fetch per workout, for
  // the user and provider of that workout's summary (same page, same order).
  for (size_t i = 0; i < rows.workout_ids_to_fetch.size(); ++i) {
    const std::string_view workout_id = rows.workout_ids_to_fetch[i];
    const rows::SummaryRow* summary = nullptr;
    if (i < rows.summaries.size() && rows.summaries[i].id == workout_id) {
      summary = &rows.summaries[i];
    } else {
      for (const auto& row : rows.summaries) {
        if (row.id == workout_id) summary = &row;
      }
    }
    const auto user = user_of(summary ? summary->user_id : std::nullopt, rows);
    if (summary) {
      // The workout's row says whose stream it is, as a webhook notice's would: the page
      // carries its provider, provider id and sport (a later notice replaces them).
      const rows::WorkoutStreamNotice notice{workout_id, user, summary->provider, summary->provider_id, summary->sport};
      if (auto r = note(streams_.write_notice(notice, seq), "workout_streams", workout_id, seq, user, counts); !r) {
        return r;
      }
    }
    auto r = queued(jobs_.queue_workout_stream(workout_id, user, summary ? summary->provider : std::nullopt, seq,
                                               received_at_ms),
                    counts);
    if (!r) return r;
  }
  return {};
}

}  // namespace hh::store
