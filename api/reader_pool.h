#pragma once
// Readers for the read API. A reader (store/read_store.h: a read-only handle with its
// queries) is used by one thread at a time, so each request leases a whole one. A lease is
// held only while a request runs its queries, never across a co_await, so at most one
// reader per io thread is in use and the pool stays that small. Readers are opened on
// demand and kept for reuse.
//
// Thread-safe. The pool must outlive every lease.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database_location.h"
#include "store/read_store.h"

namespace hh::api {

using Reader = store::ReadStore;

class ReaderPool {
 public:
  // `database`: the `database = …` setting (store::open_read_store).
  explicit ReaderPool(store::Database database) : database_(std::move(database)) {}

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

  const store::Database database_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Reader>> idle_;  // GUARDED_BY(mutex_)
};

}  // namespace hh::api
