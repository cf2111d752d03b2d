#pragma once
// Latest-wins writes of the tables with one row per key on PostgreSQL: summaries,
// connections, devices, lab_orders, lab_appointments, lab_results, lab_parsing_jobs,
// backfills, providers (columns: store/derived/record_columns.h; the SQLite twin:
// store/sqlite/derived/record_tables.h). One round trip per row (pg_latest_wins.h).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>

#include "common/result.h"
#include "events/event_rows.h"
#include "store/postgres/derived/pg_latest_wins.h"

namespace hh::store {

class PgRecordTables {
 public:
  static Result<PgRecordTables> create(pg::Connection& db);

  Result<WriteOutcome> write(const events::SummaryRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::ConnectionRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::DeviceRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::LabOrderRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::LabAppointmentRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::LabResultRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::LabParsingJobRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::BackfillNotice& row, int64_t seq);
  Result<WriteOutcome> write(const events::ProviderRow& row, int64_t seq);
  // Marks the connection deregistered and keeps its other fields (the SQLite twin's rule).
  Result<WriteOutcome> write(const events::DeregistrationRow& row, int64_t seq);

 private:
  PgRecordTables(PgLatestWins summaries, PgLatestWins connections, PgLatestWins devices, PgLatestWins lab_orders,
                 PgLatestWins lab_appointments, PgLatestWins lab_results, PgLatestWins lab_parsing_jobs,
                 PgLatestWins backfills, PgLatestWins providers, PgLatestWins deregistrations)
      : summaries_(std::move(summaries)),
        connections_(std::move(connections)),
        devices_(std::move(devices)),
        lab_orders_(std::move(lab_orders)),
        lab_appointments_(std::move(lab_appointments)),
        lab_results_(std::move(lab_results)),
        lab_parsing_jobs_(std::move(lab_parsing_jobs)),
        backfills_(std::move(backfills)),
        providers_(std::move(providers)),
        deregistrations_(std::move(deregistrations)) {}

  PgLatestWins summaries_, connections_, devices_, lab_orders_, lab_appointments_, lab_results_, lab_parsing_jobs_,
      backfills_, providers_, deregistrations_;
};

}  // namespace hh::store
