#include "store/sqlite/sqlite_read_store.h"

#include "store/sqlite/database.h"
#include "store/sqlite/queries/change_query.h"
#include "store/sqlite/queries/chart_query.h"
#include "store/sqlite/queries/delivery_query.h"
#include "store/sqlite/queries/record_queries.h"
#include "store/sqlite/queries/sample_query.h"
#include "store/sqlite/queries/stream_query.h"
#include "store/sqlite/queries/summary_query.h"
#include "store/sqlite/queries/user_orders_query.h"

namespace hh::store {
namespace {

// The queries prepare their statements on first use (query_statements.h).
class SqliteReadStore final : public ReadStore {
 public:
  explicit SqliteReadStore(sqlite::Connection db) : db_(std::move(db)) {}
  SqliteReadStore(const SqliteReadStore&) = delete;
  SqliteReadStore& operator=(const SqliteReadStore&) = delete;

  Result<void> begin_snapshot() override { return db_.exec("BEGIN"); }
  void end_snapshot() override { (void)db_.exec("COMMIT"); }  // nothing was written

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
  sqlite::Connection db_;  // declared first: the queries keep its address and go first
  SqliteSampleQuery samples_{db_};
  SqliteSummaryQuery summaries_{db_};
  SqliteStreamQuery streams_{db_};
  SqliteChangeQuery changes_{db_};
  SqliteDeliveryQuery deliveries_{db_};
  SqliteUserOrderIdsQuery user_order_ids_{db_};
  SqliteChartQuery charts_{db_};
  SqliteRecordQuery<StoredConnection> connections_{db_};
  SqliteRecordQuery<StoredDevice> devices_{db_};
  SqliteRecordQuery<StoredLabOrder> lab_orders_{db_};
  SqliteRecordQuery<StoredLabAppointment> lab_appointments_{db_};
  SqliteRecordQuery<StoredLabResult> lab_results_{db_};
  SqliteRecordQuery<StoredParsingJob> parsing_jobs_{db_};
  SqliteRecordQuery<StoredBackfill> backfills_{db_};
  SqliteRecordQuery<StoredUser> users_{db_};
  SqliteRecordQuery<StoredProvider> providers_{db_};
};

}  // namespace

Result<std::unique_ptr<ReadStore>> open_sqlite_read_store(const std::string& path) {
  auto db = open_for_reading(path);
  if (!db) return fail(db.error());
  return std::unique_ptr<ReadStore>(new SqliteReadStore(std::move(*db)));
}

}  // namespace hh::store
