#pragma once
// store::SampleQuery on PostgreSQL (`healthhook query samples`, the read API's timeseries
// pages), with the same rows in the same order as SQLite's (store/sqlite/queries/sample_query.h):
//
//  - by_series (export): one cursor over the matching series joined with their samples, in
//    series name order then time: the series' unique index and the samples primary key
//    (series_id, t_ms) give that order without a sort.
//  - by_time (pages): each of the user's series is read along its primary-key range in
//    keyset batches (t_ms after the last one read; small at first, since a page is short,
//    then larger) and the series are merged here, as SQLite does, so a page costs about the
//    same however far into the data it starts. The first batches of all the series go in
//    one round trip (a pipeline); all batches are read in one transaction.
//
// samples.value and series.source_id are jsonb scalars (migration 001); they come out as
// SQLite keeps them: a JSON number without a fraction or exponent as an integer, another
// number as a float, a string as its text.
//
// Lifetime: the session must outlive the query; one thread at a time.
#include <optional>
#include <vector>

#include "store/postgres/read/read_session.h"
#include "store/read_query_common.h"
#include "store/read_store.h"

namespace hh::store::pgread {

// A jsonb scalar read as `jsonb_typeof(v)`, `v #>> '{}'` into the row's value.
void read_json_value(std::optional<std::string_view> type, std::optional<std::string_view> text, StoredSample& row);

class PgSampleQuery final : public SampleQuery {
 public:
  explicit PgSampleQuery(ReadSession& session) : session_(&session), export_(session) {}

  Result<void> start_by_series(const SampleFilter& filter) override;
  Result<void> start_by_time(const SampleFilter& filter, std::optional<SamplePosition> after) override;
  Result<bool> next(StoredSample& row) override;
  void finish() override;

 private:
  // A series being merged (by_time) and its current batch of samples.
  struct Head : SeriesHead {
    int64_t from_ms = 0;  // the next batch starts here
    int batch_rows = 0;   // LIMIT of the next batch
    bool done = false;    // the last batch was the end of the range
    pg::Rows batch;
    int index = 0;
    bool has_row() const { return index < batch.size(); }
  };

  bool wants_batch(Head& head) const;  // false when it has rows left or none to come
  pg::Params batch_params(const Head& head) const;
  static void take_batch(Head& head, pg::Rows batch);
  Result<void> fill(Head& head);  // the head's next batch (if need be)
  Result<bool> next_by_time(StoredSample& row);
  void release_hold();

  ReadSession* session_;
  Cursor export_;
  SampleListing mode_ = SampleListing::idle;
  int64_t until_ms_ = 0;
  std::vector<Head> heads_;
  std::optional<size_t> to_step_;  // by_time: the head whose row was handed out last
  bool held_ = false;              // by_time holds the session's transaction
  uint64_t hold_generation_ = 0;
};

}  // namespace hh::store::pgread
