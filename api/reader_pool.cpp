#include "api/reader_pool.h"

#include "store/open_readers.h"

namespace hh::api {

Result<ReaderPool::Lease> ReaderPool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto reader = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(reader));
    }
  }
  auto reader = store::open_read_store(database_);
  if (!reader) return fail(reader);
  return Lease(*this, std::move(*reader));
}

Result<void> ReaderPool::warm_up() {
  auto lease = acquire();
  if (!lease) return fail(lease);
  return {};
}

void ReaderPool::give_back(std::unique_ptr<Reader> reader) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(reader));
}

}  // namespace hh::api
