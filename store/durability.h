#pragma once
// How commits reach the disk, behind what every backend implements: the acks of ingest
// commits released by a sync on a thread of its own (CommitSync), and the copying of the
// write-ahead log into the store's main files off the writer's commits (Checkpointer).
// A backend that needs neither (PostgreSQL syncs and checkpoints in its server) fails to
// start them with ErrorKind::unavailable, and callers go on without: slower acks, nothing
// else changes.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/result.h"
#include "store/background_work.h"

namespace hh::store {

// Makes the inbox writer's commits durable after the commit returned, on a thread of its
// own, then runs their acks (store/sqlite/wal_sync.h: the SQLite one and why it is as
// durable as a sync inside COMMIT). Thread-safe.
class CommitSync {
 public:
  // Runs on the sync thread after the sync: `synced` false with the reason otherwise.
  using AfterSync = std::function<void(bool synced, const std::string& error)>;
  virtual ~CommitSync() = default;

  // Call after the commit returned. `after` runs exactly once, after a sync that began
  // later (or, after stop(), at once with synced = false).
  virtual void after_commit(AfterSync after) = 0;
  // Syncs and runs everything handed over so far, then joins the thread.
  virtual void stop() = 0;
  // Syncs so far (counted before the acks they release run).
  virtual uint64_t syncs() const = 0;
  // A sync has failed: every later ack is refused until this object is destroyed (a
  // failed sync cannot be trusted to be retried: wal_sync.h says why).
  virtual bool failed() const = 0;
  // Why the first failed sync failed ("" while none has): for /readyz, off the hot path.
  virtual std::string failure() const = 0;
};

// Copies the write-ahead log into the store on a thread of its own; the writer finishes
// each copy between two of its transactions (run_once(), as background work of the
// InboxWriter, or finish_on_writer() from a catch-up loop).
class Checkpointer : public BackgroundWork {
 public:
  // On the writer's thread, between its transactions. Cheap when nothing is due.
  virtual void finish_on_writer() = 0;
  // Checkpoints that copied the whole log (it starts over next).
  virtual uint64_t rewinds() const = 0;
  // Syncs of the store's main files by the thread, after its copies.
  virtual uint64_t database_syncs() const = 0;
  // A sync of the main files failed: no checkpoint runs until a restart.
  virtual bool stopped_by_failure() const = 0;
};

// How often a checkpointer copies: `serving` keeps the log short, so reads of the read
// API stay fast; `catching_up` (rebuild, replay) copies less often, since the pages it
// rewrites most are copied once per checkpoint.
enum class CheckpointPace { serving, catching_up };

}  // namespace hh::store
