#include "store/sqlite/derived/derived_writer.h"

namespace hh::store {
namespace {

// A change without a time range (everything but samples).
Change change(int64_t seq, std::string_view table, std::string_view key, std::string_view op, int64_t row_count = 1) {
  return Change{seq, table, key, op, row_count, std::nullopt, std::nullopt};
}

std::string_view joined(std::string& out, std::string_view a, std::string_view b) {
  out.assign(a).append("/").append(b);
  return out;
}

}  // namespace

Result<std::unique_ptr<DerivedWriter>> DerivedWriter::create(sqlite::Connection& db) {
  auto records = RecordTables::create(db);
  if (!records) return fail(records.error());
  auto users = UserTable::create(db);
  if (!users) return fail(users.error());
  auto samples = SampleWriter::create(db);
  if (!samples) return fail(samples.error());
  auto streams = StreamWriter::create(db);
  if (!streams) return fail(streams.error());
  auto jobs = FollowUpJobs::create(db);
  if (!jobs) return fail(jobs.error());
  auto feed = ChangeFeed::create(db);
  if (!feed) return fail(feed.error());
  return std::unique_ptr<DerivedWriter>(new DerivedWriter(db, std::move(*records), std::move(*users),
                                                          std::move(*samples), std::move(*streams), std::move(*jobs),
                                                          std::move(*feed)));
}

Result<ApplyCounts> DerivedWriter::apply(const events::DeliveryRows& rows, int64_t seq, int64_t received_at_ms) {
  ApplyCounts counts;
  malformed_stream_ = false;
  if (auto applied = apply_rows(rows, seq, received_at_ms, counts); !applied) {
    // Read the code now: the caller's ROLLBACK replaces it.
    const ErrorKind kind = malformed_stream_ ? ErrorKind::data : sqlite::error_kind(db_->last_error_code());
    return fail(kind, applied.error());
  }
  return counts;
}

Result<void> DerivedWriter::note(Result<WriteOutcome> outcome, std::string_view table, std::string_view key,
                                 int64_t seq, ApplyCounts& counts) {
  if (!outcome) return fail(std::string(table) + ": " + outcome.error());
  ++counts.rows_seen;
  if (*outcome == WriteOutcome::stale) return {};
  ++counts.rows_written;
  return feed_.append(change(seq, table, key, change_op(*outcome)));
}

Result<void> DerivedWriter::apply_rows(const events::DeliveryRows& rows, int64_t seq, int64_t received_at_ms,
                                       ApplyCounts& counts) {
  // Who the delivery is about: bookkeeping of every delivery, not one of its rows, so it
  // counts neither towards a step's size nor towards the rows applied.
  if (const auto& user_id = rows.identity.user_id) {
    auto written = users_.write(rows.identity, seq, received_at_ms);
    if (!written) return fail("users: " + written.error());
    if (*written != WriteOutcome::stale) {
      if (auto r = feed_.append(change(seq, "users", *user_id, change_op(*written))); !r) return r;
    }
  }
  for (const events::SummaryRow& row : rows.summaries) {
    if (auto r = note(records_.write(row, seq), "summaries", joined(key_, row.resource, row.id), seq, counts); !r) {
      return r;
    }
  }

  if (!rows.sample_batches.empty()) {
    series_changes_.clear();
    for (const events::SampleBatch& batch : rows.sample_batches) {
      auto written = samples_.write(batch, seq, series_changes_);
      if (!written) return fail("samples: " + written.error());
      counts.rows_seen += static_cast<int64_t>(batch.samples.size());
      counts.samples_written += *written;
      counts.rows_written += *written;
    }
    for (const SeriesChange& c : series_changes_) {
      const int64_t count = c.inserted + c.updated;
      if (count == 0) continue;
      auto appended = feed_.append(
          Change{seq, "samples", *c.row_key, c.updated == 0 ? "insert" : "update", count, c.from_ms, c.to_ms});
      if (!appended) return appended;
    }
  }

  if (const auto& notice = rows.workout_stream) {
    if (auto r = note(streams_.write_notice(*notice, seq), "workout_streams", notice->workout_id, seq, counts); !r) {
      return r;
    }
    auto queued = jobs_.queue_workout_stream(notice->workout_id, notice->user_id, notice->provider, seq, received_at_ms);
    if (!queued) return fail("jobs: " + queued.error());
    counts.jobs_queued += *queued ? 1 : 0;
  }

  if (const auto& notice = rows.backfill) {
    FollowUpJobs::backfill_key(key_, *notice);
    if (auto r = note(records_.write(*notice, seq), "backfills", key_, seq, counts); !r) return r;
    auto queued = jobs_.queue_backfill(*notice, seq, received_at_ms);
    if (!queued) return fail("jobs: " + queued.error());
    counts.jobs_queued += *queued ? 1 : 0;
  }

  if (const auto& row = rows.connection) {
    if (auto r = note(records_.write(*row, seq), "connections", joined(key_, row->user_id, row->provider), seq,
                      counts);
        !r) {
      return r;
    }
  }
  if (const auto& row = rows.device) {
    if (auto r = note(records_.write(*row, seq), "devices", row->id, seq, counts); !r) return r;
  }
  if (const auto& row = rows.lab_order) {
    if (auto r = note(records_.write(*row, seq), "lab_orders", row->id, seq, counts); !r) return r;
  }
  if (const auto& row = rows.lab_appointment) {
    if (auto r = note(records_.write(*row, seq), "lab_appointments", row->id, seq, counts); !r) return r;
  }
  if (const auto& row = rows.lab_result) {
    if (auto r = note(records_.write(*row, seq), "lab_results", row->order_id, seq, counts); !r) return r;
  }
  if (const auto& row = rows.lab_parsing_job) {
    if (auto r = note(records_.write(*row, seq), "lab_parsing_jobs", row->id, seq, counts); !r) return r;
  }

  if (const auto& stream = rows.fetched_stream) {
    auto replaced = streams_.replace_points(*stream, seq);
    if (!replaced) {
      malformed_stream_ = replaced.error().starts_with("stream: ");
      return fail("stream_points: " + replaced.error());
    }
    counts.rows_seen += static_cast<int64_t>(stream->point_count) + 1;
    if (replaced->stream_row != WriteOutcome::stale) {
      counts.rows_written += replaced->points + 1;
      if (auto r = feed_.append(change(seq, "workout_streams", stream->workout_id, change_op(replaced->stream_row)));
          !r) {
        return r;
      }
      if (auto r = feed_.append(change(seq, "stream_points", stream->workout_id, "replace", replaced->points)); !r) {
        return r;
      }
    }
  }

  for (const events::ProviderRow& row : rows.providers) {
    if (auto r = note(records_.write(row, seq), "providers", row.slug, seq, counts); !r) return r;
  }

  // A workouts page fetched for a backfill of streams: one stream fetch per workout, for
  // the user and provider of that workout's summary (same page, same order).
  for (size_t i = 0; i < rows.workout_ids_to_fetch.size(); ++i) {
    const std::string_view workout_id = rows.workout_ids_to_fetch[i];
    const events::SummaryRow* summary = nullptr;
    if (i < rows.summaries.size() && rows.summaries[i].id == workout_id) {
      summary = &rows.summaries[i];
    } else {
      for (const auto& row : rows.summaries) {
        if (row.id == workout_id) summary = &row;
      }
    }
    auto queued = jobs_.queue_workout_stream(workout_id, summary ? summary->user_id : std::nullopt,
                                             summary ? summary->provider : std::nullopt, seq, received_at_ms);
    if (!queued) return fail("jobs: " + queued.error());
    counts.jobs_queued += *queued ? 1 : 0;
  }
  return {};
}

}  // namespace hh::store
