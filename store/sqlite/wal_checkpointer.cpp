#include "store/sqlite/wal_checkpointer.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "common/log.h"
#include "common/thread_name.h"

namespace hh::store {
namespace {

// Also look this often without a report, so a WAL left behind when writes stop (or
// written before this object existed) is copied too.
constexpr auto kIdleInterval = std::chrono::seconds(1);

// Through SQLite's own descriptor of the file: closing a second descriptor of our own
// would drop the process's POSIX locks on the database, SQLite's among them.
std::string sync_database_file(sqlite::Connection& own) {
  sqlite3_file* file = nullptr;
  int rc = sqlite3_file_control(own.get(), "main", SQLITE_FCNTL_FILE_POINTER, &file);
  if (rc == SQLITE_OK && (file == nullptr || file->pMethods == nullptr)) rc = SQLITE_MISUSE;
  if (rc == SQLITE_OK) rc = file->pMethods->xSync(file, SQLITE_SYNC_NORMAL);
  if (rc == SQLITE_OK) return {};
  return std::string("sync of the database file: ") + sqlite3_errstr(rc);
}

}  // namespace

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::start(sqlite::Connection& write_db, const std::string& path,
                                                                       int checkpoint_frames, DatabaseSync sync) {
  auto previous = write_db.query_int("PRAGMA wal_autocheckpoint");
  if (!previous) return fail(previous);
  auto own = sqlite::Connection::open(path, sqlite::OpenMode::read_write);
  if (!own) return fail(own);
  if (auto opened = own->open_wal(); !opened) return fail(opened);  // else checkpoints do nothing
  std::unique_ptr<WalCheckpointer> checkpointer(
      new WalCheckpointer(write_db, previous->value_or(1000), std::move(*own), std::max(checkpoint_frames, 1),
                          sync ? std::move(sync) : DatabaseSync(sync_database_file)));
  // Replaces the autocheckpoint, which is itself a WAL hook.
  sqlite3_wal_hook(write_db.get(), &WalCheckpointer::on_commit, checkpointer.get());
  checkpointer->thread_ = start_named_thread("hh-checkpoint", [c = checkpointer.get()] { c->run(); });
  return checkpointer;
}

WalCheckpointer::WalCheckpointer(sqlite::Connection& write_db, int64_t autocheckpoint, sqlite::Connection own,
                                 int checkpoint_frames, DatabaseSync sync)
    : write_db_(write_db),
      autocheckpoint_(autocheckpoint),
      checkpoint_frames_(checkpoint_frames),
      own_(std::move(own)),
      sync_database_(std::move(sync)) {}

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
    if (stopping_ || failed_.load(std::memory_order_relaxed)) return;
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
  const int rc =
      sqlite3_wal_checkpoint_v2(own_.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &wal_frames, &copied_frames);
  if (rc == SQLITE_OK && copied_frames > 0 && copied_frames != copied_before_) {
    // What was copied goes to disk here, not in the writer's finish (the header says why).
    if (std::string error = sync_database_(own_); !error.empty()) {
      failed_.store(true, std::memory_order_relaxed);
      log::error("checkpoint_sync_failed")
          .str("error", error)
          .str("effect", "no more checkpoints: the WAL keeps every change until healthhook restarts");
      return;
    }
    database_syncs_.fetch_add(1, std::memory_order_relaxed);
  }
  copied_before_ = rc == SQLITE_OK ? copied_frames : 0;
  if (wal_frames < checkpoint_frames_) return;  // an idle look at a short WAL
  // A passive checkpoint never rewinds the WAL: the writer starts again from the file's
  // beginning only if, when its transaction begins, every frame is already copied, and
  // under steady ingest it has always committed again by then (the WAL grew by the whole
  // write volume). The writer itself copies those last
  // frames (finish_on_writer). Before, this thread ran a RESTART checkpoint, which takes
  // the write lock: the writer's commits then waited in SQLite's busy handler, which
  // sleeps 1, 2, 5, 10, 15 ms…, into every ack's latency (docs/decisions/002-checkpointer-thread.md).
  finish_due_.store(true, std::memory_order_release);
}

void WalCheckpointer::finish_on_writer() {
  if (!finish_due_.exchange(false, std::memory_order_acq_rel)) return;
  if (failed_.load(std::memory_order_relaxed)) return;
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

}  // namespace hh::store
