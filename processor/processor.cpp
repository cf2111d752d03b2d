#include "processor/processor.h"

#include <algorithm>

#include "common/log.h"
#include "processor/inbox_cursor.h"
#include "processor/inline_source.h"
#include "processor/parse_pipeline.h"
#include "processor/processing_lock.h"
#include "store/sqlite/wal_checkpointer.h"
#include "events/delivery_parser.h"
#include "store/sqlite/derived/derived_writer.h"

namespace hh::processor {
namespace {

constexpr auto kFirstRetryDelay = std::chrono::milliseconds(250);
constexpr auto kMaxRetryDelay = std::chrono::seconds(30);
constexpr int64_t kBackgroundHelpersMinBacklog = 256;  // deliveries
// A catch-up checkpoints every 16,000 pages of WAL rather than every 1,000 as `serve` does
// (128 against 8 MiB with the 8 KiB pages of a new database, store/sqlite/database.cpp): the
// pages it rewrites most (the newest leaf of each series, the change feed's last page) are
// copied once per checkpoint. Heartrate replay of 10,000 x 180 samples: 367,000 samples/s
// at 1,000 pages, 383,000 at 16,000, 410,000 never checkpointing until the end (a WAL as
// large as everything written).
constexpr int kCatchUpCheckpointFrames = 16000;

int64_t micros_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
}

bool same_outcome(const StoredOutcome& stored, std::string_view status, std::string_view family,
                  std::string_view error) {
  return stored.status == status && stored.family == family &&
         (error.empty() ? !stored.error.has_value() : stored.error == error);
}

std::string database_path(sqlite::Connection& db) {
  const char* path = sqlite3_db_filename(db.get(), "main");
  return path ? path : "";
}

}  // namespace

Result<std::unique_ptr<Processor>> Processor::create(sqlite::Connection& write_db, ProcessorOptions options) {
  auto lock = ProcessingLock::acquire(write_db);
  if (!lock) return fail(lock.error());
  // Debian builds SQLite with secure_delete on: every page freed is zeroed, i.e. written
  // once more. The processor frees pages all the time (a fetched stream replaces its
  // points, rebuild empties tables), and nothing it frees is gone for good: the inbox
  // keeps every delivery.
  // FAST zeroes only inside pages written anyway: about half the bytes a rebuild writes.
  if (auto fast = write_db.exec("PRAGMA secure_delete = FAST"); !fast) return fail(fast.error());
  auto cursor = InboxCursor::create(write_db);
  if (!cursor) return fail(cursor.error());
  auto applied = cursor->applied_seq();
  if (!applied) return fail(applied.error());
  auto durability = store::StepDurability::create(write_db);
  if (!durability) return fail(durability.error());
  auto writer = store::DerivedWriter::create(write_db);
  if (!writer) return fail(writer.error());
  (*writer)->defer_changes();  // flushed by each step before it commits
  options.max_rows_per_step = std::max<size_t>(options.max_rows_per_step, 1);
  options.max_deliveries_per_step = std::max<size_t>(options.max_deliveries_per_step, 1);
  std::unique_ptr<Processor> processor(
      new Processor(write_db, options, std::make_unique<ProcessingLock>(std::move(*lock)),
                    std::make_unique<InboxCursor>(std::move(*cursor)), std::move(*writer), *durability));
  processor->applied_seq_ = *applied;
  processor->stats_.applied_seq.store(*applied);
  return processor;
}

Processor::Processor(sqlite::Connection& db, ProcessorOptions options, std::unique_ptr<ProcessingLock> lock,
                     std::unique_ptr<InboxCursor> cursor, std::unique_ptr<store::DerivedWriter> writer,
                     store::StepDurability live_durability)
    : db_(db),
      options_(options),
      lock_(std::move(lock)),
      cursor_(std::move(cursor)),
      writer_(std::move(writer)),
      parser_(std::make_unique<events::DeliveryParser>()),
      live_durability_(live_durability) {}

Processor::~Processor() = default;

bool Processor::run_once(int64_t durable_seq) {
  if (consecutive_failures_ > 0 && std::chrono::steady_clock::now() < retry_at_) return false;
  // Only rows on disk are applied (inbox_writer.h says why); every inbox row is written
  // through the writer that passes durable_seq (another process would need the processing
  // lock). With a parse thread (choose_live_source()), the rows committed since are parsed
  // meanwhile, while their sync runs.
  // Never past the newest row: the pipeline reads up to its bound and then waits for more,
  // so a bound beyond it would let a row committed later with a seq below it be skipped.
  Result<StepOutcome> stepped = StepOutcome{};
  if (auto newest = cursor_->newest_seq(); !newest) {
    stepped = fail(newest.error());
  } else {
    choose_live_source(*newest);
    const int64_t last_seq = std::min(durable_seq, *newest);
    if (last_seq <= applied_seq_) return false;
    may_yield_ = static_cast<bool>(deliveries_waiting_);
    far_behind_ = last_seq - applied_seq_ > max_backlog_to_yield_;
    stepped = relaxed_step(last_seq);
    may_yield_ = false;
  }
  if (!stepped) {
    ++consecutive_failures_;
    stats_.step_failures.fetch_add(1, std::memory_order_relaxed);
    const auto delay = std::min<std::chrono::milliseconds>(
        kMaxRetryDelay, kFirstRetryDelay * (int64_t{1} << std::min(consecutive_failures_ - 1, 10)));
    retry_at_ = std::chrono::steady_clock::now() + delay;
    log::error("processor_step_failed")
        .str("error", stepped.error())
        .num("applied_seq", applied_seq_)
        .num("retry_in_ms", delay.count());
    return false;
  }
  if (consecutive_failures_ > 0) log::info("processor_recovered").num("applied_seq", applied_seq_);
  consecutive_failures_ = 0;
  return stepped->more;
}

Result<void> Processor::run_until_caught_up(const std::function<void(int64_t, int64_t)>& progress) {
  if (auto synced = sync_applied_seq(); !synced) return synced;
  auto newest = cursor_->newest_seq();
  if (!newest) return fail(newest.error());
  const int64_t last_seq = *newest;
  if (progress) progress(applied_seq_, last_seq);
  // Both helpers need the file (their own connections and threads); without them this is
  // slower, not wrong, so a failure to start one is logged and the work goes on without
  // it. A short backlog (replay calls this after every batch) is not worth two threads.
  std::string path = last_seq - applied_seq_ >= kBackgroundHelpersMinBacklog ? database_path(db_) : std::string();
  std::unique_ptr<store::WalCheckpointer> checkpointer;
  if (!path.empty()) {
    auto started = store::WalCheckpointer::start(db_, path, kCatchUpCheckpointFrames);
    if (started) {
      checkpointer = std::move(*started);
    } else {
      log::warn("checkpointer_not_started").str("error", started.error());
    }
  }
  std::unique_ptr<ParsePipeline> pipeline;
  while (applied_seq_ < last_seq) {
    if (!path.empty() && !pipeline) {
      auto started = ParsePipeline::start(path, applied_seq_, last_seq);
      if (started) {
        pipeline = std::move(*started);
      } else {
        log::warn("parse_pipeline_not_started").str("error", started.error());
        path.clear();
      }
    }
    Result<StepOutcome> stepped = step_with(pipeline, last_seq);  // read ahead again from there after a failure
    if (!stepped) {
      stats_.step_failures.fetch_add(1, std::memory_order_relaxed);
      return fail(stepped.error());
    }
    if (checkpointer) checkpointer->finish_on_writer();
    if (progress) progress(applied_seq_, last_seq);
    if (stepped->deliveries == 0) break;  // nothing left after applied_seq
  }
  return {};
}

Result<void> Processor::sync_applied_seq() {
  auto stored = cursor_->applied_seq();
  if (!stored) return fail(stored.error());
  if (*stored != applied_seq_) {
    writer_->forget_cached_ids();
    applied_seq_ = *stored;
    stats_.applied_seq.store(applied_seq_, std::memory_order_relaxed);
  }
  return {};
}

Result<Processor::StepOutcome> Processor::relaxed_step(int64_t last_seq) {
  if (auto relaxed = live_durability_.relax(); !relaxed) return fail(relaxed.error());
  Result<StepOutcome> stepped = live_step(last_seq);
  // Ingest commits on this connection must sync again, whatever the step did.
  if (auto restored = live_durability_.restore(); !restored) return fail(restored.error());
  return stepped;
}

void Processor::choose_live_source(int64_t newest_seq) {
  const auto now = std::chrono::steady_clock::now();
  const bool inbox_grew = inbox_newest_seen_ >= 0 && newest_seq != inbox_newest_seen_;
  if (inbox_grew) inbox_grew_at_ = now;
  inbox_newest_seen_ = newest_seq;
  // Stopped as soon as deliveries arrive again (the rows it read ahead are read again
  // inline: applied_seq_ is where the next step starts), and once caught up, so an idle
  // `serve` holds no thread or file for it (bench/soak checks its open files).
  if (live_pipeline_ && (inbox_grew || applied_seq_ >= newest_seq)) live_pipeline_.reset();
  const bool quiet = !inbox_grew && (!inbox_grew_at_ || now - *inbox_grew_at_ >= options_.parse_ahead_after_quiet);
  if (!live_pipeline_ && quiet && newest_seq - applied_seq_ >= options_.parse_ahead_min_backlog) {
    start_live_pipeline();
  }
  if (live_pipeline_ && newest_seq > applied_seq_) live_pipeline_->read_ahead(newest_seq);
}

void Processor::start_live_pipeline() {
  if (live_pipeline_unavailable_) return;
  const std::string path = database_path(db_);
  auto started = path.empty() ? Result<std::unique_ptr<ParsePipeline>>(fail("no database file"))
                              : ParsePipeline::start(path, applied_seq_, applied_seq_, ParsePipeline::Mode::follow);
  if (started) {
    live_pipeline_ = std::move(*started);
    stats_.parse_ahead_starts.fetch_add(1, std::memory_order_relaxed);
  } else {
    // Slower, not wrong: live steps read and parse on this thread.
    live_pipeline_unavailable_ = true;
    if (!path.empty()) log::warn("parse_pipeline_not_started").str("error", started.error());
  }
}

Result<Processor::StepOutcome> Processor::live_step(int64_t last_seq) {
  if (live_pipeline_) live_pipeline_->extend(last_seq);
  return step_with(live_pipeline_, last_seq);  // after a failure, a new pipeline only by choose_live_source()
}

Result<Processor::StepOutcome> Processor::step_with(std::unique_ptr<ParsePipeline>& pipeline, int64_t last_seq) {
  if (pipeline) {
    Result<StepOutcome> stepped = step(*pipeline);
    if (stepped) return stepped;
    if (sqlite3_get_autocommit(db_.get()) == 0) (void)db_.exec("ROLLBACK");
    // The pipeline cannot rewind (nor follow a reset_derived() that moved applied_seq):
    // this step again inline, which marks a delivery the store rejects as invalid.
    pipeline.reset();
    writer_->forget_cached_ids();
  }
  return step_marking_poisoned(last_seq);
}

Result<Processor::StepOutcome> Processor::step_marking_poisoned(int64_t last_seq) {
  poisoned_.clear();
  for (;;) {
    Result<StepOutcome> stepped = StepOutcome{};
    {
      InlineSource source(*cursor_, *parser_, poisoned_, last_seq,
                          static_cast<int64_t>(options_.max_deliveries_per_step));
      stepped = step(source);
    }
    if (stepped) return stepped;
    // Rolled back (the Transaction's destructor; should that ROLLBACK itself have failed,
    // the next BEGIN would fail forever: make sure).
    if (sqlite3_get_autocommit(db_.get()) == 0) (void)db_.exec("ROLLBACK");
    // The delivery being applied is to blame only for a data failure.
    writer_->forget_cached_ids();
    const bool already = std::any_of(poisoned_.begin(), poisoned_.end(),
                                     [&](const PoisonedDelivery& p) { return p.seq == failed_seq_; });
    if (!last_failure_is_data_ || failed_seq_ == 0 || already) return stepped;
    log::warn("delivery_rejected_by_store").num("seq", failed_seq_).str("error", failed_error_);
    poisoned_.push_back({failed_seq_, failed_error_});
  }
}

bool Processor::should_yield(size_t deliveries, size_t rows) const {
  if (!may_yield_ || deliveries < kDeliveriesBeforeYield) return false;
  if (far_behind_ && deliveries < kBehindStep.max_deliveries_per_step && rows < kBehindStep.max_rows_per_step) {
    return false;
  }
  return deliveries_waiting_();
}

Result<Processor::StepOutcome> Processor::step(ParsedSource& source) {
  const auto started = std::chrono::steady_clock::now();
  last_failure_is_data_ = false;
  failed_seq_ = 0;
  auto txn = sqlite::Transaction::begin(db_);
  if (!txn) return fail("begin: " + txn.error());
  // Destroyed before the transaction: the source's inbox statement is reset before a
  // rollback, which then cannot fail because of it.
  struct EndStep {
    ParsedSource& source;
    ~EndStep() { source.end_step(); }
  } end_step{source};
  if (auto synced = sync_applied_seq(); !synced) return fail(synced.error());
  writer_->discard_changes();  // left over from a step that rolled back

  outcomes_.clear();
  uint64_t by_status[4] = {0, 0, 0, 0};
  uint64_t samples = 0, rows_written = 0, jobs = 0;
  size_t rows_seen = 0;
  int64_t last_seq = applied_seq_;
  bool more = false;
  for (;;) {
    if (outcomes_.size() >= options_.max_deliveries_per_step || rows_seen >= options_.max_rows_per_step) {
      more = true;
      break;
    }
    if (should_yield(outcomes_.size(), rows_seen)) {
      more = true;
      break;
    }
    auto next = source.next(last_seq);
    if (!next) return fail(next.error());
    ParsedDelivery* delivery = *next;
    if (delivery == nullptr) break;
    last_seq = delivery->seq;
    events::ParseResult& parsed = delivery->parse;

    if (parsed.status == events::Status::processed) {
      auto applied = writer_->apply(*delivery->rows, delivery->seq, delivery->received_at_ms);
      if (!applied) {
        last_failure_is_data_ = writer_->last_failure_is_data();
        failed_seq_ = delivery->seq;
        failed_error_ = applied.error();
        return fail("delivery " + std::to_string(delivery->seq) + ": " + applied.error());
      }
      rows_seen += static_cast<size_t>(applied->rows_seen);
      rows_written += static_cast<uint64_t>(applied->rows_written);
      samples += static_cast<uint64_t>(applied->samples_written);
      jobs += static_cast<uint64_t>(applied->jobs_queued);
    }
    ++by_status[static_cast<int>(parsed.status)];
    if (parsed.status == events::Status::invalid) {
      log::warn("delivery_invalid")
          .num("seq", delivery->seq)
          .str("family", events::family_name(parsed.family))
          .str("error", parsed.error);
    }
    const std::string_view status = events::status_name(parsed.status);
    const std::string_view family = events::family_name(parsed.family);
    // Rewriting a row rewrites its body too (20 KB for 180 samples): skip what a
    // rebuild would only write again unchanged.
    if (!same_outcome(delivery->stored, status, family, parsed.error)) {
      outcomes_.push_back(Outcome{delivery->seq, status, family, std::move(parsed.error)});
    } else {
      outcomes_.push_back(Outcome{0, {}, {}, {}});
    }
  }
  source.end_step();

  if (auto flushed = writer_->flush_changes(); !flushed) return fail("change feed: " + flushed.error());
  // Written together after the loop: several rows per UPDATE (InboxCursor says why).
  outcome_updates_.clear();
  for (const Outcome& outcome : outcomes_) {
    if (outcome.seq != 0) outcome_updates_.push_back({outcome.seq, outcome.status, outcome.family, outcome.error});
  }
  if (auto set = cursor_->set_outcomes(outcome_updates_); !set) return fail(set.error());
  if (last_seq != applied_seq_) {
    if (auto set = cursor_->set_applied_seq(last_seq); !set) return fail("advancing applied_seq: " + set.error());
  }
  if (auto committed = txn->commit(); !committed) return fail("commit: " + committed.error());

  applied_seq_ = last_seq;
  stats_.processed.fetch_add(by_status[static_cast<int>(events::Status::processed)], std::memory_order_relaxed);
  stats_.invalid.fetch_add(by_status[static_cast<int>(events::Status::invalid)], std::memory_order_relaxed);
  stats_.ignored.fetch_add(by_status[static_cast<int>(events::Status::ignored)], std::memory_order_relaxed);
  stats_.unknown.fetch_add(by_status[static_cast<int>(events::Status::unknown)], std::memory_order_relaxed);
  stats_.samples_applied.fetch_add(samples, std::memory_order_relaxed);
  stats_.rows_applied.fetch_add(rows_written, std::memory_order_relaxed);
  stats_.jobs_queued.fetch_add(jobs, std::memory_order_relaxed);
  stats_.steps.fetch_add(1, std::memory_order_relaxed);
  stats_.applied_seq.store(applied_seq_, std::memory_order_relaxed);
  stats_.last_step_micros.store(micros_since(started), std::memory_order_relaxed);
  if (jobs > 0 && on_jobs_queued_) on_jobs_queued_();
  return StepOutcome{more, outcomes_.size()};
}

}  // namespace hh::processor
