#pragma once
// `healthhook replay FILE… --database DB`: capture lines into the inbox, then through the
// processor, offline (no server, no network).
//
// Lines are appended with the store's Inbox in batches: one transaction (and one sync)
// per batch of up to `batch_deliveries` deliveries or `batch_bytes` of bodies, so a batch
// is durable when the next one starts and memory stays flat. Every `process_every`
// deliveries, and at the end, the Processor (the same code as in `serve`) applies
// everything stored so far. Replaying a
// file again, or after an interruption, is safe: a message id already in the inbox is a
// duplicate and changes nothing (as when the service retries).
//
// Each stored row gets received_at = the line's timestamp: the capture's own time, so a
// replay is reproducible and capture --since/--until select the same deliveries from the
// replayed inbox. Follow-up fetches the deliveries ask for are queued in `jobs` for the
// next `serve`, as live.
//
// Signatures (optional): checked against the line's id, timestamp and body with the
// given secrets; the timestamp's age is not checked, since a capture is old by
// definition (the verifier is called with "now" = the line's own timestamp).
//
// Lifetime: `store` must outlive this object. One thread.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/progress.h"
#include "common/result.h"
#include "replay/capture_file.h"
#include "receiver/signature/webhook_signature.h"
#include "store/store.h"

namespace hh::replay {

struct OfflineOptions {
  size_t batch_deliveries = 1000;
  size_t batch_bytes = 16 * 1024 * 1024;
  // The processor runs when this many deliveries were stored since it last ran, and at
  // the end. Each run starts helper threads with their own connections (a parse
  // pipeline, a WAL checkpointer), so not after every batch
  // (docs/decisions/020-replay-processes-every-20000.md).
  size_t process_every = 20000;
  std::shared_ptr<const signature::Verifier> verifier;  // null: signatures not checked
  // A body larger than this is reported and not stored, as the receiver answers it 413
  // (`max_body_bytes`), so that a capture gives the same tables offline and re-sent with
  // --to. 0: no limit.
  uint64_t max_body_bytes = 0;
};

struct OfflineSummary {
  uint64_t lines = 0;       // lines read, malformed ones too (blank lines not counted)
  uint64_t stored = 0;
  uint64_t duplicates = 0;  // message id already in the inbox (or earlier in the files)
  uint64_t failed = 0;      // malformed lines and signature failures (not stored)
  uint64_t bodies_removed = 0;  // lines marked "body_removed" (retention): nothing to replay
  uint64_t processed = 0, invalid = 0, ignored = 0, unknown = 0;  // processor outcomes
  uint64_t samples = 0;     // samples inserted or replaced
  double seconds = 0;
};

// A line that was not stored: the file's name, the line number, why.
using LineReport = std::function<void(std::string_view file, uint64_t line, std::string_view reason)>;

class OfflineReplay {
 public:
  // Takes the database's processing lock: fails when another process (`serve`) is
  // applying this inbox.
  static Result<std::unique_ptr<OfflineReplay>> create(store::Store& store, OfflineOptions options);
  ~OfflineReplay();
  OfflineReplay(const OfflineReplay&) = delete;
  OfflineReplay& operator=(const OfflineReplay&) = delete;

  // Reads every line of `reader`. Malformed lines and bad signatures are reported and
  // skipped; a store failure stops the replay and is returned (summary() then counts what
  // was stored and applied before it). `progress` (may be null)
  // is advanced to `progress_base + bytes read`.
  Result<void> add(CaptureReader& reader, const LineReport& report, Progress* progress, uint64_t progress_base);

  // Stores the last batch and applies everything. Then summary() is final. While the
  // processor runs, an "applying" progress line is shown when add() was given a Progress.
  Result<void> finish();

  const OfflineSummary& summary() const { return summary_; }

 private:
  struct Impl;
  explicit OfflineReplay(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  OfflineSummary summary_;
};

}  // namespace hh::replay
