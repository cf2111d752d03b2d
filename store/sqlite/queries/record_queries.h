#pragma once
// store::RecordQuery<Row> on SQLite: the tables with one row per key, for `healthhook query
// <table>` and the read API's per-user pages. Every listing is in primary-key order (no
// sort, constant memory).
//
// One class template does the stepping; each row type says in record_queries.cpp which SQL
// it reads and how its columns become the row, and the template is instantiated there for
// the row types of store/read_store.h (and only those).
//
// Lifetime: the connection must outlive the query; one thread at a time.
#include "store/read_store.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

template <typename Row>
class SqliteRecordQuery final : public RecordQuery<Row> {
 public:
  explicit SqliteRecordQuery(sqlite::Connection& db);
  Result<void> start(const RecordFilter& filter) override;
  Result<void> start_by_key(std::string_view change_key) override;
  // False when there are no more rows (the statement is then reset).
  Result<bool> next(Row& row) override;
  // Resets a listing stopped early (ends its read snapshot).
  void finish() override { statements_.finish(); }

 private:
  QueryStatements<2> statements_;  // the listing, the lookup by key
};

extern template class SqliteRecordQuery<StoredConnection>;
extern template class SqliteRecordQuery<StoredDevice>;
extern template class SqliteRecordQuery<StoredLabOrder>;
extern template class SqliteRecordQuery<StoredLabAppointment>;
extern template class SqliteRecordQuery<StoredLabResult>;
extern template class SqliteRecordQuery<StoredParsingJob>;
extern template class SqliteRecordQuery<StoredBackfill>;
extern template class SqliteRecordQuery<StoredUser>;
extern template class SqliteRecordQuery<StoredProvider>;

}  // namespace hh::store
