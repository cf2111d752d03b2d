#pragma once
// Read connections for the read API. A SQLite connection (and its prepared statements)
// is used by one thread at a time, so each request leases a whole Reader: a connection
// with its queries. A lease is held only while a request runs its queries, never across
// a co_await, so at most one Reader per io thread is in use and the pool stays that small.
// Readers are opened on demand and kept for reuse.
//
// Thread-safe. The pool must outlive every lease.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/sqlite/queries/change_query.h"
#include "store/sqlite/queries/delivery_query.h"
#include "store/sqlite/queries/record_queries.h"
#include "store/sqlite/queries/sample_query.h"
#include "store/sqlite/queries/stream_query.h"
#include "store/sqlite/queries/summary_query.h"
#include "store/sqlite/queries/user_orders_query.h"
#include "store/sqlite/connection.h"

namespace hh::api {

struct Reader {
  std::unique_ptr<sqlite::Connection> db;  // read-only; on the heap: the queries keep its address
  store::SampleQuery samples;
  store::SummaryQuery summaries;
  store::StreamQuery streams;
  store::ChangeQuery changes;
  store::DeliveryQuery deliveries;
  store::UserQuery users;
  store::ConnectionQuery connections;
  store::DeviceQuery devices;
  store::UserOrderIdsQuery order_ids;
  store::LabOrderQuery orders;
  store::LabAppointmentQuery appointments;
  store::LabResultQuery results;
};

class ReaderPool {
 public:
  explicit ReaderPool(std::string database_path) : path_(std::move(database_path)) {}

  class Lease {
   public:
    Lease(ReaderPool& pool, std::unique_ptr<Reader> reader) : pool_(&pool), reader_(std::move(reader)) {}
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (reader_) pool_->give_back(std::move(reader_));
    }
    Reader& operator*() { return *reader_; }
    Reader* operator->() { return reader_.get(); }

   private:
    ReaderPool* pool_;
    std::unique_ptr<Reader> reader_;
  };

  Result<Lease> acquire();
  // Opens one reader now, so a database that cannot be read fails at start-up.
  Result<void> warm_up();

 private:
  void give_back(std::unique_ptr<Reader> reader);
  static Result<std::unique_ptr<Reader>> open(const std::string& path);

  const std::string path_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Reader>> idle_;  // GUARDED_BY(mutex_)
};

}  // namespace hh::api
