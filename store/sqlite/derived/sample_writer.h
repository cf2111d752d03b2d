#pragma once
// Latest-wins writes of timeseries samples on SQLite (store/derived/sample_writer.h says
// the rules), one statement per sample. `samples` is keyed by two integers (series_id,
// t_ms) WITHOUT ROWID: much faster than the five-column text key. A batch of 8 or more
// reads the timestamps stored in its span first (one range scan), so each sample runs the
// one statement it needs (an insert for a new timestamp, an update for a stored one)
// instead of an insert that fails before the update (decision 060).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <vector>

#include "common/result.h"
#include "rows/delivery_rows.h"
#include "store/derived/derived_parts.h"
#include "store/derived/sample_writer.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct SqliteSampleWriterState {
  using Connection = sqlite::Connection;
  // The same write as two statement pairs: `full` binds every column; `plain` only the
  // columns most samples have (value, unit, offset: heartrate, steps, glucose …) and
  // writes NULL for the rest, which saves half the binds on the hottest loop.
  struct Statements {
    sqlite::Statement insert;
    sqlite::Statement update;
  };

  sqlite::Connection* db;
  sqlite::Statement stored_in_span;  // t_ms of a series between two timestamps, at most ?4
  std::vector<int64_t> stored;       // what it found for the batch being written (reused)
  sqlite::Statement insert_series;
  sqlite::Statement find_series;
  sqlite::Statement set_source_id;
  sqlite::Statement set_app_id;
  Statements full;
  Statements plain;
};

using SqliteSampleWriter = SampleWriterOf<SqliteSampleWriterState>;
template <>
Result<SqliteSampleWriter> SqliteSampleWriter::create(sqlite::Connection& db);
template <>
Result<int64_t> SqliteSampleWriter::write(const rows::SampleBatch& batch, int64_t seq,
                                          std::vector<SeriesChange>& changes);

}  // namespace hh::store
