#include "processor/wal_checkpointer.h"

#include <chrono>

namespace hh::processor {
namespace {

// Often enough that the WAL stays a few steps long (and is restarted from its beginning,
// hot in the page cache), rarely enough to cost nothing when idle.
constexpr auto kInterval = std::chrono::milliseconds(50);

}  // namespace

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::start(sqlite::Connection& write_db, const std::string& path) {
  auto previous = write_db.query_int("PRAGMA wal_autocheckpoint");
  if (!previous) return fail(previous.error());
  auto own = sqlite::Connection::open(path, sqlite::OpenMode::read_write);
  if (!own) return fail(own.error());
  if (auto configured = own->exec("PRAGMA busy_timeout = 1000"); !configured) return fail(configured.error());
  if (auto off = write_db.exec("PRAGMA wal_autocheckpoint = 0"); !off) return fail(off.error());
  std::unique_ptr<WalCheckpointer> checkpointer(
      new WalCheckpointer(write_db, previous->value_or(1000), std::move(*own)));
  checkpointer->thread_ = std::thread([c = checkpointer.get()] { c->run(); });
  return checkpointer;
}

WalCheckpointer::WalCheckpointer(sqlite::Connection& write_db, int64_t autocheckpoint, sqlite::Connection own)
    : write_db_(write_db), autocheckpoint_(autocheckpoint), own_(std::move(own)) {}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  (void)write_db_.exec("PRAGMA wal_autocheckpoint = " + std::to_string(autocheckpoint_));
}

void WalCheckpointer::run() {
  std::unique_lock lock(mutex_);
  while (!stop_cv_.wait_for(lock, kInterval, [this] { return stopping_; })) {
    lock.unlock();
    // PASSIVE: copies what no reader still needs and never waits for the writer. A
    // failure (busy) is harmless: the next round tries again, and the writer's own
    // autocheckpoint returns when this object is gone.
    sqlite3_wal_checkpoint_v2(own_.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    lock.lock();
  }
}

}  // namespace hh::processor
