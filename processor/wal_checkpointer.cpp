#include "processor/wal_checkpointer.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace hh::processor {
namespace {

// Also look this often without a report, so a WAL left behind when writes stop (or
// written before this object existed) is copied too.
constexpr auto kIdleInterval = std::chrono::seconds(1);

}  // namespace

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::start(sqlite::Connection& write_db, const std::string& path,
                                                                       int checkpoint_frames) {
  auto previous = write_db.query_int("PRAGMA wal_autocheckpoint");
  if (!previous) return fail(previous.error());
  auto own = sqlite::Connection::open(path, sqlite::OpenMode::read_write);
  if (!own) return fail(own.error());
  // A connection finds out that the file is in WAL mode (and opens the WAL) only when it
  // first reads the database; until then a checkpoint through it does nothing at all.
  if (auto read = own->query_int("SELECT count(*) FROM sqlite_schema"); !read) return fail(read.error());
  std::unique_ptr<WalCheckpointer> checkpointer(
      new WalCheckpointer(write_db, previous->value_or(1000), std::move(*own), std::max(checkpoint_frames, 1)));
  // Replaces the autocheckpoint, which is itself a WAL hook.
  sqlite3_wal_hook(write_db.get(), &WalCheckpointer::on_commit, checkpointer.get());
  checkpointer->thread_ = std::thread([c = checkpointer.get()] { c->run(); });
  return checkpointer;
}

WalCheckpointer::WalCheckpointer(sqlite::Connection& write_db, int64_t autocheckpoint, sqlite::Connection own,
                                 int checkpoint_frames)
    : write_db_(write_db), autocheckpoint_(autocheckpoint), checkpoint_frames_(checkpoint_frames), own_(std::move(own)) {}

WalCheckpointer::~WalCheckpointer() {
  sqlite3_wal_hook(write_db_.get(), nullptr, nullptr);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (thread_.joinable()) thread_.join();
  (void)write_db_.exec("PRAGMA wal_autocheckpoint = " + std::to_string(autocheckpoint_));
}

// On the writer's thread, after each commit (its lock released): only a flag and a wake-up.
int WalCheckpointer::on_commit(void* self, sqlite3*, const char*, int wal_frames) {
  auto* checkpointer = static_cast<WalCheckpointer*>(self);
  if (wal_frames >= checkpointer->checkpoint_frames_) {
    {
      std::lock_guard lock(checkpointer->mutex_);
      checkpointer->due_ = true;
    }
    checkpointer->wakeup_.notify_one();
  }
  return SQLITE_OK;
}

void WalCheckpointer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wakeup_.wait_for(lock, kIdleInterval, [this] { return due_ || stopping_; });
    if (stopping_) return;
    due_ = false;
    lock.unlock();
    checkpoint_once();
    lock.lock();
  }
}

void WalCheckpointer::checkpoint_once() {
  // The writer has not finished the last one yet: copying now would only take the
  // checkpoint lock from it (its attempt would fail busy, and the WAL grow meanwhile).
  if (finish_due_.load(std::memory_order_acquire)) return;
  // PASSIVE copies what no reader still needs, without waiting for the writer, which
  // goes on committing meanwhile. A failure (busy) is harmless: the next round tries again.
  int wal_frames = 0;
  int copied_frames = 0;
  sqlite3_wal_checkpoint_v2(own_.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &wal_frames, &copied_frames);
  if (wal_frames < checkpoint_frames_) return;  // an idle look at a short WAL
  // A passive checkpoint never rewinds the WAL: the writer starts again from the file's
  // beginning only if, when its transaction begins, every frame is already copied, and
  // under steady ingest it has always committed again by then (the WAL grew by the whole
  // write volume: 1 GB in 10 s of 1 KiB deliveries). The writer itself copies those last
  // frames (finish_on_writer). Before, this thread ran a RESTART checkpoint, which takes
  // the write lock: the writer's commits then waited in SQLite's busy handler, which
  // sleeps 1, 2, 5, 10, 15 ms… (strace: 0.3 s of sleeps in 5 s of 1 KiB load, p99 28 ms).
  finish_due_.store(true, std::memory_order_release);
}

void WalCheckpointer::finish_on_writer() {
  if (!finish_due_.exchange(false, std::memory_order_acq_rel)) return;
  // No other writer can commit in between (this is the writer), so the frames left are
  // those of the transactions since this thread's checkpoint: a few, plus one sync of
  // the database file. A reader still using old frames keeps them, as with SQLite's
  // autocheckpoint; the WAL rewinds after a later checkpoint.
  int wal_frames = 0;
  int copied_frames = 0;
  const int rc =
      sqlite3_wal_checkpoint_v2(write_db_.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &wal_frames, &copied_frames);
  if (rc == SQLITE_BUSY) {
    // Another connection checkpoints (not this object's thread: it waits for us); again
    // between the next two transactions.
    finish_due_.store(true, std::memory_order_release);
  } else if (rc == SQLITE_OK && copied_frames == wal_frames) {
    rewinds_.fetch_add(1, std::memory_order_relaxed);
  }
}

bool WalCheckpointer::run_once(int64_t) {
  finish_on_writer();
  return false;
}

}  // namespace hh::processor
