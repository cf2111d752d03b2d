#pragma once
// store::StreamQuery on SQLite: workout stream points (`healthhook query streams`, the read
// API's stream pages) and the workout_streams row that describes a stream. Both listings
// read the stream_points primary key (workout_id, idx): no sort, constant memory.
//
// Lifetime: the connection must outlive the query; one thread at a time.
#include "store/read_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

class SqliteStreamQuery final : public StreamQuery {
 public:
  explicit SqliteStreamQuery(sqlite::Connection& db);

  Result<void> start_export(const StreamFilter& filter) override;
  Result<void> start_page(std::string_view workout_id, std::optional<int64_t> after_idx, int64_t limit) override;
  Result<bool> next(StoredStreamPoint& row) override;
  void finish() override { statements_.finish(); }
  Result<bool> find_workout(std::string_view workout_id, StoredWorkoutStream& row) override;

 private:
  QueryStatements<3> statements_;
};

}  // namespace hh::store
