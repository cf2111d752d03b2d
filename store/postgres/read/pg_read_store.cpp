// store::ReadStore on PostgreSQL: one connection (read_session.h) and its queries.
#include "store/postgres/read/pg_read_store.h"

#include "store/postgres/read/pg_chart_query.h"
#include "store/postgres/read/pg_queries.h"
#include "store/postgres/read/pg_record_queries.h"
#include "store/postgres/read/pg_sample_query.h"
#include "store/postgres/read/read_session.h"

namespace hh::store {
namespace {

// A snapshot is the session's REPEATABLE READ READ ONLY transaction: every query of the
// snapshot sees the state of its first one.
class PgReadStore final : public ReadStore {
 public:
  explicit PgReadStore(pgread::ReaderLink link) : session_(std::move(link)) {}
  PgReadStore(const PgReadStore&) = delete;
  PgReadStore& operator=(const PgReadStore&) = delete;

  Result<void> begin_snapshot() override { return session_.begin_snapshot(); }
  void end_snapshot() override { session_.end_snapshot(); }

  SampleQuery& samples() override { return samples_; }
  SummaryQuery& summaries() override { return summaries_; }
  StreamQuery& streams() override { return streams_; }
  ChangeQuery& changes() override { return changes_; }
  DeliveryQuery& deliveries() override { return deliveries_; }
  UserOrderIdsQuery& user_order_ids() override { return user_order_ids_; }
  ChartQuery& charts() override { return charts_; }
  RecordQuery<StoredConnection>& connections() override { return connections_; }
  RecordQuery<StoredDevice>& devices() override { return devices_; }
  RecordQuery<StoredLabOrder>& lab_orders() override { return lab_orders_; }
  RecordQuery<StoredLabAppointment>& lab_appointments() override { return lab_appointments_; }
  RecordQuery<StoredLabResult>& lab_results() override { return lab_results_; }
  RecordQuery<StoredParsingJob>& parsing_jobs() override { return parsing_jobs_; }
  RecordQuery<StoredBackfill>& backfills() override { return backfills_; }
  RecordQuery<StoredUser>& users() override { return users_; }
  RecordQuery<StoredProvider>& providers() override { return providers_; }

 private:
  pgread::ReadSession session_;  // declared first: the queries keep its address and go first
  pgread::PgSampleQuery samples_{session_};
  pgread::PgSummaryQuery summaries_{session_};
  pgread::PgStreamQuery streams_{session_};
  pgread::PgChangeQuery changes_{session_};
  pgread::PgDeliveryQuery deliveries_{session_};
  pgread::PgUserOrderIdsQuery user_order_ids_{session_};
  pgread::PgChartQuery charts_{session_};
  pgread::PgRecordQuery<StoredConnection> connections_{session_};
  pgread::PgRecordQuery<StoredDevice> devices_{session_};
  pgread::PgRecordQuery<StoredLabOrder> lab_orders_{session_};
  pgread::PgRecordQuery<StoredLabAppointment> lab_appointments_{session_};
  pgread::PgRecordQuery<StoredLabResult> lab_results_{session_};
  pgread::PgRecordQuery<StoredParsingJob> parsing_jobs_{session_};
  pgread::PgRecordQuery<StoredBackfill> backfills_{session_};
  pgread::PgRecordQuery<StoredUser> users_{session_};
  pgread::PgRecordQuery<StoredProvider> providers_{session_};
};

}  // namespace

Result<std::unique_ptr<ReadStore>> open_postgres_read_store(const Database& database) {
  auto db = pgread::ReaderLink::open(database);
  if (!db) return fail(db.error_kind(), db.error());
  return std::unique_ptr<ReadStore>(new PgReadStore(std::move(*db)));
}

}  // namespace hh::store
