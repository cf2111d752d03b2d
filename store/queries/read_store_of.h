#pragma once
// store::ReadStore for every backend: a read session (its connection and snapshots) and
// the queries on it, written once (store/queries/) and run by the backend's listings
// (store/queries/listings.h); only the sample query is each backend's own.
//
// Lifetime: one thread at a time; the queries go before the session they keep.
#include <utility>

#include "store/queries/change_query.h"
#include "store/queries/chart_query.h"
#include "store/queries/delivery_query.h"
#include "store/queries/erasure_query.h"
#include "store/queries/record_query.h"
#include "store/queries/stream_query.h"
#include "store/queries/summary_query.h"
#include "store/queries/user_orders_query.h"
#include "store/read_store.h"
#include "store/schema/record_tables.h"

namespace hh::store {

template <typename Reads>
class ReadStoreOf final : public ReadStore {
 public:
  // Opens the session from what the backend's factory opened (its connection).
  template <typename Connection>
  explicit ReadStoreOf(Connection connection) : session_(std::move(connection)) {}
  ReadStoreOf(const ReadStoreOf&) = delete;
  ReadStoreOf& operator=(const ReadStoreOf&) = delete;

  // Nothing is written in a snapshot, so ending it cannot lose data.
  Result<void> begin_snapshot() override { return session_.begin_snapshot(); }
  void end_snapshot() override { session_.end_snapshot(); }

  SampleQuery& samples() override { return samples_; }
  SummaryQuery& summaries() override { return summaries_; }
  StreamQuery& streams() override { return streams_; }
  ChangeQuery& changes() override { return changes_; }
  DeliveryQuery& deliveries() override { return deliveries_; }
  UserOrderIdsQuery& user_order_ids() override { return user_order_ids_; }
  ChartQuery& charts() override { return charts_; }
  ErasureQuery& erasures() override { return erasures_; }
  RecordQuery<StoredConnection>& connections() override { return connections_; }
  RecordQuery<StoredDevice>& devices() override { return devices_; }
  RecordQuery<StoredLabOrder>& lab_orders() override { return lab_orders_; }
  RecordQuery<StoredLabAppointment>& lab_appointments() override { return lab_appointments_; }
  RecordQuery<StoredLabResult>& lab_results() override { return lab_results_; }
  RecordQuery<StoredParsingJob>& parsing_jobs() override { return parsing_jobs_; }
  RecordQuery<StoredBackfill>& backfills() override { return backfills_; }
  RecordQuery<StoredUser>& users() override { return users_; }
  RecordQuery<StoredProvider>& providers() override { return providers_; }

  Result<std::optional<int64_t>> unfinished_rebuild() override { return Reads::unfinished_rebuild(session_); }

 private:
  template <typename D>
  using Records = RecordQueryOf<Reads, D>;

  typename Reads::Session session_;  // declared first: the queries keep its address and go first
  typename Reads::SampleQuery samples_{session_};
  SummaryQueryOf<Reads> summaries_{session_};
  StreamQueryOf<Reads> streams_{session_};
  ChangeQueryOf<Reads> changes_{session_};
  DeliveryQueryOf<Reads> deliveries_{session_};
  UserOrderIdsQueryOf<Reads> user_order_ids_{session_};
  ChartQueryOf<Reads> charts_{session_};
  ErasureQueryOf<Reads> erasures_{session_};
  Records<schema::Connections> connections_{session_};
  Records<schema::Devices> devices_{session_};
  Records<schema::LabOrders> lab_orders_{session_};
  Records<schema::LabAppointments> lab_appointments_{session_};
  Records<schema::LabResults> lab_results_{session_};
  Records<schema::LabParsingJobs> parsing_jobs_{session_};
  Records<schema::Backfills> backfills_{session_};
  Records<schema::Users> users_{session_};
  Records<schema::Providers> providers_{session_};
};

}  // namespace hh::store
