#pragma once
// The event processor: applies inbox rows to the derived tables in seq order, the same
// code for live processing (`serve`: as background work of the writer thread, or on a
// thread of its own where the store allows, processing_thread.h), replay and `rebuild`.
//
// A step is ONE transaction of the store (store/processing_store.h): read the next rows
// after applied_seq, parse each (DeliveryParser), apply its rows, record its outcome,
// advance applied_seq, commit. So a crash neither repeats nor skips a delivery: either
// the whole step is durable or none of it.
//
// A step ends after max_rows_per_step derived rows or max_deliveries_per_step deliveries,
// whichever comes first. A single delivery is never split, but for a fetched stream longer
// than the store's slice (store::ProcessingStore::stream_slice_points()): its step ends
// before it, and it is applied a slice per step, counted applied with its last slice
// (stream_in_slices.h). Thousands of rows per
// transaction are needed for throughput (100-row transactions reached a third of the
// 10,000-row rate). Where steps run on the writer thread, it commits ingest batches only
// between steps and acks wait for those, so in `serve` a step there also ends early when
// deliveries are waiting for their commit (yield_to()), once it has applied
// kDeliveriesBeforeYield of its own.
//
// Failures:
//  - a delivery that cannot be parsed, or whose rows the store rejects (a constraint:
//    ErrorKind::data), is marked `invalid` with the error; the deliveries after it go on;
//  - a store failure (disk full, I/O error) rolls the whole step back; run_once() logs it
//    and retries later with a growing delay (0.25 s doubling to 8 s), so it never spins.
//
// Lifetime: the processor owns its ProcessingStore, and with it the store's processing
// lock, for its whole life: a second processor on the same store (another process) fails
// to be created. On a store several instances share (Leadership::when_free), a processor
// applies the share of the inbox its store gives it (PostgreSQL: a fair share of the shards
// of users, store/postgres/processing_locks.h), standing by while it has none, and starts
// again from its position whenever that share changes (ProcessingStore::lead_version). It is used
// only on the thread that calls run_once() / run_until_caught_up() (in `serve`, the writer
// thread or its own). run_once() parses on the calling thread while deliveries arrive,
// and starts a ParsePipeline (a thread and a reader) that parses ahead of the steps only
// for a backlog the inbox no longer adds to (a restart, the end of a burst); it stops once
// caught up or when deliveries arrive again (ProcessorOptions says why).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "processor/parse_pipeline.h"
#include "processor/parsed_delivery.h"
#include "store/background_work.h"
#include "store/processing_store.h"

namespace hh::events {
class DeliveryParser;
}

namespace hh::processor {

class StreamInSlices;

struct ProcessorOptions {
  size_t max_rows_per_step = 10000;       // derived rows (samples, points, records) per transaction
  size_t max_deliveries_per_step = 2000;  // inbox rows per transaction
  // Live steps (run_once()) take their rows from a parse thread (ParsePipeline) only
  // while at least `parse_ahead_min_backlog` deliveries wait and the inbox has not grown
  // for `parse_ahead_after_quiet`; otherwise they read and parse on the calling thread.
  // While deliveries arrive, the two threads are not free: each row was read a second time
  // (the parse thread's reader finds the writer's new rows only in the log) and
  // handed over between threads, which cost more than the parse it moved, on a machine
  // whose cores the ingest keeps busy (docs/decisions/010-parse-thread-for-quiet-backlog.md).
  // A backlog with nothing arriving leaves a core idle, and there the thread is worth it
  // (20 KiB end to end, whose processing goes on after the last ack).
  int64_t parse_ahead_min_backlog = 256;
  std::chrono::milliseconds parse_ahead_after_quiet{50};
};

// Long steps, for catching up a backlog that no ack waits for (offline replay, rebuild) and
// for `serve`, whose steps end early anyway once a delivery waits (yield_to()): fewer
// commits, and a page written by many deliveries (the newest leaf of each series, the
// change feed's last page) is written once per step instead of once per 10,000 rows
// (docs/decisions/009-processor-steps-give-way.md).
inline constexpr ProcessorOptions kCatchUpSteps{.max_rows_per_step = 100000, .max_deliveries_per_step = 20000};

class Processor : public store::BackgroundWork {
 public:
  // Takes `store` (opened with Store::open_processing(), or a backend's own for tests).
  static Result<std::unique_ptr<Processor>> create(std::unique_ptr<store::ProcessingStore> store,
                                                   ProcessorOptions options = {});
  ~Processor() override;
  Processor(const Processor&) = delete;
  Processor& operator=(const Processor&) = delete;

  // One bounded transaction applying rows up to `durable_seq` (the newest inbox row on
  // disk: store/inbox_writer.h); true = more rows are waiting. Returns false without work
  // when caught up, or while waiting to retry after a store failure.
  bool run_once(int64_t durable_seq) override;

  // Applies everything up to the newest inbox row (replay, rebuild), step by step.
  // `progress(applied_seq, last_seq)` after each step; may be null. Stops at the first
  // store failure (no retry: the caller reports it).
  Result<void> run_until_caught_up(const std::function<void(int64_t, int64_t)>& progress);

  int64_t applied_seq() const { return stats_.applied_seq.load(std::memory_order_relaxed); }

  // `rebuild`: empties the derived tables (not the inbox, not jobs), resets outcomes to
  // 'pending' (unless options.keep_statuses) and applied_seq to 0, and marks the rebuild
  // unfinished until the step that applies today's newest delivery again, in one
  // transaction (store::ProcessingStore::reset_derived, store/unfinished_rebuild.h). The
  // next step notices and starts again from the first delivery.
  Result<void> reset_derived(store::ResetOptions options = {});

  // An unfinished rebuild's last inbox row, as last read from the store; 0 when the derived
  // tables are whole. Read at creation; while set, run_once() reads it again after the step
  // that reaches it and at most every kRebuildCheckEvery (on PostgreSQL other instances'
  // shards may finish it). Any thread.
  int64_t unfinished_rebuild() const { return stats_.rebuild_through.load(std::memory_order_relaxed); }
  static constexpr auto kRebuildCheckEvery = std::chrono::seconds(1);

  // A step applies at least this many deliveries before it yields to waiting ones: the
  // processor keeps up under load, and a step's fixed cost (its commit) is shared.
  static constexpr size_t kDeliveriesBeforeYield = 4;
  // Behind by more than kMaxBacklogToYield deliveries, a step yields only after the work
  // of the step size used before steps yielded (kBehindStep): under an ingest rate that
  // processing cannot sustain, the lag stops growing there and acks slow down to what
  // processing sustains, each waiting for one such step at most, not for a whole long step.
  static constexpr int64_t kMaxBacklogToYield = 20000;
  static constexpr ProcessorOptions kBehindStep{.max_rows_per_step = 10000, .max_deliveries_per_step = 2000};
  // `deliveries_waiting` is asked between deliveries (on the processing thread; it must be
  // cheap, e.g. InboxWriter::queue_depth() > 0): while it says yes, the step commits what
  // it has applied and returns "more", so the writer commits the waiting deliveries first
  // and their acks do not wait for the rest of the step (docs/decisions/009-processor-steps-give-way.md).
  // `max_backlog`: kMaxBacklogToYield (tests set it). Set before the first step.
  void yield_to(std::function<bool()> deliveries_waiting, int64_t max_backlog = kMaxBacklogToYield) {
    deliveries_waiting_ = std::move(deliveries_waiting);
    max_backlog_to_yield_ = max_backlog;
  }

  // Called on the processing thread after a step that queued follow-up jobs committed
  // (e.g. Fetcher::wake). Set before the first step; must not block.
  void on_jobs_queued(std::function<void()> callback) { on_jobs_queued_ = std::move(callback); }

  // A live step's rows come from a parse thread now (ProcessorOptions: when); for tests.
  bool parsing_ahead() const { return live_pipeline_ != nullptr; }

  // Monotonic counters for metrics; readable from any thread.
  struct Stats {
    std::atomic<uint64_t> processed{0}, invalid{0}, ignored{0}, unknown{0};  // deliveries by status
    std::atomic<uint64_t> samples_applied{0};  // samples inserted or replaced
    std::atomic<uint64_t> rows_applied{0};     // derived rows inserted or replaced (samples included)
    std::atomic<uint64_t> jobs_queued{0};      // follow-up jobs queued or re-queued
    std::atomic<uint64_t> steps{0};            // committed steps
    std::atomic<uint64_t> step_failures{0};    // steps rolled back by a store failure
    std::atomic<uint64_t> parse_ahead_starts{0};  // live parse threads started (ProcessorOptions: when)
    std::atomic<int64_t> applied_seq{0};
    std::atomic<int64_t> last_step_micros{0};
    std::atomic<int64_t> leading{0};  // 1 while this process applies the inbox (take_lead())
    std::atomic<int64_t> shards{-1};  // PostgreSQL: the shards of users it applies; -1 on SQLite
    std::atomic<int64_t> rebuild_through{0};  // unfinished_rebuild()
  };
  const Stats& stats() const { return stats_; }

 private:
  struct StepOutcome {
    bool more = false;  // stopped at a limit; rows may be waiting
    size_t deliveries = 0;
    // The store rejected this delivery's rows (ErrorKind::data): the step is rolled back.
    std::optional<PoisonedDelivery> rejected;
  };
  // One delivery's outcome, written to deliveries after the inbox cursor is done.
  struct Outcome {
    int64_t seq;
    std::string_view status;
    std::string_view family;
    std::string error;
    std::string user_id;  // "" nobody
  };

  Processor(std::unique_ptr<store::ProcessingStore> store, ProcessorOptions options);
  // A live step (run_once) with the store's step sync relaxed around it, applying the rows up
  // to `last_seq` (at most the newest row).
  Result<StepOutcome> relaxed_step(int64_t last_seq);
  // Applies the rows up to `last_seq` parsed by live_pipeline_ when it runs; inline
  // otherwise, or again inline after a failure (which marks a delivery the store rejects
  // as invalid).
  Result<StepOutcome> live_step(int64_t last_seq);
  // Before a live step: starts or stops live_pipeline_ by the rule of ProcessorOptions
  // (`newest_seq`: the newest inbox row), then lets it read and parse every committed row
  // up to `newest_seq`, on disk or not yet (parsing changes nothing), so the step after
  // their sync finds them ready.
  void choose_live_source(int64_t newest_seq);
  // Starts live_pipeline_ at applied_seq_ unless it could not start before.
  void start_live_pipeline();
  // A pipeline reading the rows after `after_seq` (up to `last_seq`) through a reader of
  // the store's own.
  Result<std::unique_ptr<ParsePipeline>> start_pipeline(int64_t after_seq, int64_t last_seq, ParsePipeline::Mode mode);
  // One step with rows from `pipeline`, none after `last_seq`; without one, or after it
  // failed (then it is dropped), the step inline.
  Result<StepOutcome> step_with(std::unique_ptr<ParsePipeline>& pipeline, int64_t last_seq);
  // An inline step, retried while the store rejects a delivery's rows (each retry marks
  // one more delivery invalid, so this ends).
  Result<StepOutcome> step_marking_poisoned(int64_t last_seq);
  // Enough of this step is done to give way to waiting deliveries (yield_to()).
  bool should_yield(size_t deliveries, size_t rows) const;
  // One transaction: the rows `source` hands out, applied, recorded, applied_seq advanced.
  // A delivery whose rows the store rejects (ErrorKind::data) ends the step as
  // `rejected`, rolled back, for step_marking_poisoned() to mark.
  Result<StepOutcome> step(ParsedSource& source);
  Result<StepOutcome> step_in_transaction(ParsedSource& source, std::chrono::steady_clock::time_point started);
  // The step of sliced_stream_'s next slice (instead of reading the source); with its last
  // slice, the delivery's outcome and applied_seq.
  Result<StepOutcome> slice_step(std::chrono::steady_clock::time_point started);
  // Whether `delivery` is applied in slices; if so, sliced_stream_ takes it.
  bool take_for_slices(const ParsedDelivery& delivery);
  // Re-reads applied_seq (inside a transaction): a reset_derived() since the last step
  // makes the cached series ids invalid.
  Result<void> sync_applied_seq();
  // Whether this process applies the inbox (store::ProcessingStore::take_lead()): asked
  // again at most every kLeadRetry while another instance does.
  bool take_lead();
  // While a rebuild is unfinished: reads the store's mark again (`now`, or when
  // kRebuildCheckEvery has passed) and logs when it is gone.
  void follow_unfinished_rebuild(bool now);

  std::unique_ptr<store::ProcessingStore> store_;
  const ProcessorOptions options_;
  bool leading_ = false;
  uint64_t lead_version_ = 0;  // store_->lead_version() when the position was last read
  bool standing_by_ = false;  // logged that another instance leads
  std::chrono::steady_clock::time_point next_lead_try_{};
  std::chrono::steady_clock::time_point next_rebuild_check_{};
  std::unique_ptr<events::DeliveryParser> parser_;
  int64_t applied_seq_ = 0;                   // as of the last committed step
  std::vector<Outcome> outcomes_;             // reused per step
  std::vector<store::OutcomeUpdate> outcome_updates_;  // the changed ones, viewing outcomes_; reused
  std::vector<PoisonedDelivery> poisoned_;    // deliveries to mark invalid on the retry
  // A fetched stream being applied a slice per step: the next steps continue it before
  // reading anything else; dropped by a failed step (applied_seq is still before it, so
  // it is read and applied again from its first slice).
  std::unique_ptr<StreamInSlices> sliced_stream_;
  int consecutive_failures_ = 0;
  std::chrono::steady_clock::time_point retry_at_{};
  std::function<void()> on_jobs_queued_;
  std::function<bool()> deliveries_waiting_;
  int64_t max_backlog_to_yield_ = kMaxBacklogToYield;
  bool may_yield_ = false;   // this run_once() step: deliveries_waiting_ is set
  bool far_behind_ = false;  // ... and the processor is more than max_backlog_to_yield_ behind
  Stats stats_;
  // run_once(): rows parsed ahead on a thread of its own (ParsePipeline, Mode::follow),
  // for a quiet backlog only (choose_live_source()).
  std::unique_ptr<ParsePipeline> live_pipeline_;
  bool live_pipeline_unavailable_ = false;  // it could not start: inline from then on
  int64_t inbox_newest_seen_ = -1;          // the newest inbox seq the last run_once() saw (-1: none yet)
  std::optional<std::chrono::steady_clock::time_point> inbox_grew_at_;  // when it last changed (none: not since start)
};

}  // namespace hh::processor
