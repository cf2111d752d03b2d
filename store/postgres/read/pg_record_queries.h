#pragma once
// store::RecordQuery<Row> on PostgreSQL: the tables with one row per key, every listing in
// primary-key order (bytewise, as in SQLite) through a cursor, a change-feed key's row by
// its primary key. The columns, filters and key parts of each row type are SQLite's
// (store/read_query_common.h, RecordShape); pg_record_queries.cpp has the SQL.
//
// Lifetime: the session must outlive the query; one thread at a time.
#include "store/postgres/read/pg_queries.h"
#include "store/read_store.h"

namespace hh::store::pgread {

template <typename Row>
class PgRecordQuery final : public RecordQuery<Row> {
 public:
  explicit PgRecordQuery(ReadSession& session) : rows_(session, kFetchRows) {}
  Result<void> start(const RecordFilter& filter) override;
  Result<void> start_by_key(std::string_view change_key) override;
  Result<bool> next(Row& row) override;
  void finish() override { rows_.close(); }

 private:
  TwoWayListing rows_;
};

extern template class PgRecordQuery<StoredConnection>;
extern template class PgRecordQuery<StoredDevice>;
extern template class PgRecordQuery<StoredLabOrder>;
extern template class PgRecordQuery<StoredLabAppointment>;
extern template class PgRecordQuery<StoredLabResult>;
extern template class PgRecordQuery<StoredParsingJob>;
extern template class PgRecordQuery<StoredBackfill>;
extern template class PgRecordQuery<StoredUser>;
extern template class PgRecordQuery<StoredProvider>;

}  // namespace hh::store::pgread
