#include "api/reader_pool.h"

#include "store/sqlite/database.h"

namespace hh::api {

Result<std::unique_ptr<Reader>> ReaderPool::open(const std::string& path) {
  auto opened = store::open_for_reading(path);
  if (!opened) return fail(opened.error());
  auto db = std::make_unique<sqlite::Connection>(std::move(*opened));
  auto samples = store::SampleQuery::create(*db);
  if (!samples) return fail(samples.error());
  auto summaries = store::SummaryQuery::create(*db);
  if (!summaries) return fail(summaries.error());
  auto streams = store::StreamQuery::create(*db);
  if (!streams) return fail(streams.error());
  auto changes = store::ChangeQuery::create(*db);
  if (!changes) return fail(changes.error());
  auto deliveries = store::DeliveryQuery::create(*db);
  if (!deliveries) return fail(deliveries.error());
  auto users = store::UserQuery::create(*db);
  if (!users) return fail(users.error());
  auto connections = store::ConnectionQuery::create(*db);
  if (!connections) return fail(connections.error());
  auto devices = store::DeviceQuery::create(*db);
  if (!devices) return fail(devices.error());
  auto order_ids = store::UserOrderIdsQuery::create(*db);
  if (!order_ids) return fail(order_ids.error());
  auto orders = store::LabOrderQuery::create(*db);
  if (!orders) return fail(orders.error());
  auto appointments = store::LabAppointmentQuery::create(*db);
  if (!appointments) return fail(appointments.error());
  auto results = store::LabResultQuery::create(*db);
  if (!results) return fail(results.error());
  return std::make_unique<Reader>(Reader{std::move(db), std::move(*samples), std::move(*summaries),
                                         std::move(*streams), std::move(*changes), std::move(*deliveries),
                                         std::move(*users), std::move(*connections), std::move(*devices),
                                         std::move(*order_ids), std::move(*orders), std::move(*appointments),
                                         std::move(*results)});
}

Result<ReaderPool::Lease> ReaderPool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto reader = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(reader));
    }
  }
  auto reader = open(path_);
  if (!reader) return fail(reader.error());
  return Lease(*this, std::move(*reader));
}

Result<void> ReaderPool::warm_up() {
  auto lease = acquire();
  if (!lease) return fail(lease.error());
  return {};
}

void ReaderPool::give_back(std::unique_ptr<Reader> reader) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(reader));
}

}  // namespace hh::api
