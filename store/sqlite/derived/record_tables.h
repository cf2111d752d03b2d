#pragma once
// Latest-wins writes of the tables with one row per key: summaries, connections, devices,
// lab_orders, lab_appointments, lab_results, lab_parsing_jobs, backfills (002-derived.sql
// names every column), providers (005-identity.sql). Each write binds the row's fields straight from the parser's
// views (bound static: SQLite reads them during the step only).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>

#include "common/result.h"
#include "events/event_rows.h"
#include "store/sqlite/derived/latest_wins.h"

namespace hh::store {

class RecordTables {
 public:
  static Result<RecordTables> create(sqlite::Connection& db);

  Result<WriteOutcome> write(const events::SummaryRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::ConnectionRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::DeviceRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::LabOrderRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::LabAppointmentRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::LabResultRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::LabParsingJobRow& row, int64_t seq);
  Result<WriteOutcome> write(const events::BackfillNotice& row, int64_t seq);
  Result<WriteOutcome> write(const events::ProviderRow& row, int64_t seq);
  // Marks the connection deregistered (status, deregistered_at, event_type, seq) and keeps
  // its other fields; a connection not seen yet gets a row with data '{}'.
  Result<WriteOutcome> write(const events::DeregistrationRow& row, int64_t seq);

 private:
  RecordTables(LatestWins summaries, LatestWins connections, LatestWins devices, LatestWins lab_orders,
               LatestWins lab_appointments, LatestWins lab_results, LatestWins lab_parsing_jobs,
               LatestWins backfills, LatestWins providers, LatestWins deregistrations)
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

  LatestWins summaries_, connections_, devices_, lab_orders_, lab_appointments_, lab_results_, lab_parsing_jobs_,
      backfills_, providers_, deregistrations_;
};

}  // namespace hh::store
