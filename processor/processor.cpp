#include "processor/processor.h"

#include <algorithm>

#include "common/log.h"
#include "events/delivery_parser.h"
#include "processor/inline_source.h"
#include "processor/parse_pipeline.h"
#include "processor/stream_in_slices.h"

namespace hh::processor {
namespace {

constexpr auto kFirstRetryDelay = std::chrono::milliseconds(250);
// Below the idle timeout of PostgreSQL's processing session (15 s: store/postgres/pg_store.cpp,
// decision 051): a leader waiting to retry runs no statement, and a longer wait would have
// its session, and its lock, ended by the server at every retry.
constexpr auto kMaxRetryDelay = std::chrono::seconds(8);
constexpr int64_t kBackgroundHelpersMinBacklog = 256;  // deliveries
// Busy steps in a row logged as warnings (the retries wait 0.25 + 0.5 + 1 s between them).
constexpr int kBusyStepsBeforeError = 3;
// How often a standby asks whether the processing lock is free (store::Leadership).
constexpr auto kLeadRetry = std::chrono::seconds(1);
int64_t micros_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
}

bool same_outcome(const store::StoredOutcome& stored, std::string_view status, std::string_view family,
                  std::string_view error, std::string_view user_id) {
  return stored.status == status && stored.family == family &&
         (error.empty() ? !stored.error.has_value() : stored.error == error) &&
         (user_id.empty() ? !stored.user_id.has_value() : stored.user_id == user_id);
}

}  // namespace

Result<std::unique_ptr<Processor>> Processor::create(std::unique_ptr<store::ProcessingStore> store,
                                                    ProcessorOptions options) {
  auto applied = store->applied_seq();
  if (!applied) return fail(applied);
  auto unfinished = store->unfinished_rebuild();
  if (!unfinished) return fail(unfinished);
  options.max_rows_per_step = std::max<size_t>(options.max_rows_per_step, 1);
  options.max_deliveries_per_step = std::max<size_t>(options.max_deliveries_per_step, 1);
  std::unique_ptr<Processor> processor(new Processor(std::move(store), options));
  processor->applied_seq_ = *applied;
  processor->stats_.applied_seq.store(*applied);
  processor->stats_.rebuild_through.store(unfinished->value_or(0));
  return processor;
}

Result<void> Processor::reset_derived(store::ResetOptions options) {
  sliced_stream_.reset();  // applied from its first slice again, like everything else
  if (auto reset = store_->reset_derived(options); !reset) return reset;
  auto unfinished = store_->unfinished_rebuild();
  if (!unfinished) return fail(unfinished);
  stats_.rebuild_through.store(unfinished->value_or(0), std::memory_order_relaxed);
  return {};
}

void Processor::follow_unfinished_rebuild(bool now) {
  const int64_t through = unfinished_rebuild();
  if (through == 0) return;
  const auto at = std::chrono::steady_clock::now();
  if (!now && at < next_rebuild_check_) return;
  next_rebuild_check_ = at + kRebuildCheckEvery;
  auto unfinished = store_->unfinished_rebuild();
  if (!unfinished) {
    log::warn("rebuild_check_failed").str("error", unfinished.error());  // asked again later
    return;
  }
  stats_.rebuild_through.store(unfinished->value_or(0), std::memory_order_relaxed);
  if (!*unfinished) log::info("rebuild_finished").num("through_seq", through).num("applied_seq", applied_seq_);
}

Processor::Processor(std::unique_ptr<store::ProcessingStore> store, ProcessorOptions options)
    : store_(std::move(store)), options_(options), parser_(std::make_unique<events::DeliveryParser>()) {}

Processor::~Processor() = default;

bool Processor::take_lead() {
  const auto now = std::chrono::steady_clock::now();
  if (!leading_ && now < next_lead_try_) return false;
  auto taken = store_->take_lead();  // cheap while held
  // None while the lead is not taken (its check failed: the database is down): what the
  // locks last held is not applied by this instance now. -1: a store without shards.
  const int owned = store_->owned_shards();
  stats_.shards.store(owned < 0 || (taken && *taken) ? owned : 0, std::memory_order_relaxed);
  if (leading_ && taken && *taken) {
    if (store_->lead_version() == lead_version_) return true;
    // Sessions sharing the store moved shards: what was read ahead may now be another's,
    // and the position to start from is the new set's.
    live_pipeline_.reset();
    if (auto synced = sync_applied_seq(); !synced) {
      log::warn("processing_lead_sync_failed").str("error", synced.error());
      return false;
    }
    lead_version_ = store_->lead_version();
    log::info("processing_shards_changed").num("applied_seq", applied_seq_);
    return true;
  }
  next_lead_try_ = now + kLeadRetry;
  if (leading_) {
    // Lost (e.g. the store's connection broke): stand by, and start over from the stored
    // position once taken again. Rows the parse thread read ahead may be applied by another.
    leading_ = false;
    stats_.leading.store(0, std::memory_order_relaxed);
    live_pipeline_.reset();
    log::warn("processing_lead_lost").str("error", taken ? std::string("another instance may lead") : taken.error());
    standing_by_ = true;
    return false;
  }
  if (!taken) {
    log::warn("processing_lead_check_failed").str("error", taken.error());
    return false;
  }
  if (!*taken) {
    if (!standing_by_) log::info("processing_standby").str("reason", "another instance applies the inbox");
    standing_by_ = true;
    return false;
  }
  // The last leader moved the applied position meanwhile: no step before it is known.
  if (auto synced = sync_applied_seq(); !synced) {
    log::warn("processing_lead_sync_failed").str("error", synced.error());
    return false;
  }
  leading_ = true;
  lead_version_ = store_->lead_version();
  stats_.leading.store(1, std::memory_order_relaxed);
  if (standing_by_) log::info("processing_lead_taken").num("applied_seq", applied_seq_);
  return true;
}

bool Processor::run_once(int64_t durable_seq) {
  follow_unfinished_rebuild(false);
  if (!take_lead()) return false;
  if (consecutive_failures_ > 0 && std::chrono::steady_clock::now() < retry_at_) return false;
  // Only rows on disk are applied (inbox_writer.h says why); every inbox row is written
  // through the writer that passes durable_seq (another process would need the processing
  // lock; on PostgreSQL, where other instances write too, durable_seq is no bound and the
  // store's cursor stops at its inbox horizon instead). With a parse thread
  // (choose_live_source()), the rows committed since are parsed meanwhile, while their sync
  // runs.
  // Never past the newest row: the pipeline reads up to its bound and then waits for more,
  // so a bound beyond it would let a row committed later with a seq below it be skipped.
  Result<StepOutcome> stepped = StepOutcome{};
  if (auto newest = store_->newest_seq(); !newest) {
    stepped = fail(newest);
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
    // Busy, once or twice: a lock another session held (on PostgreSQL, sessions applying
    // other shards may deadlock on a row two users' deliveries both write, and the server
    // ends one step); the step is retried and nothing is lost. Anything else, or busy
    // again and again (a lock held for good, a statement timeout every step), is an error.
    const bool passing = stepped.error_kind() == ErrorKind::busy && consecutive_failures_ <= kBusyStepsBeforeError;
    (passing ? log::warn("processor_step_busy") : log::error("processor_step_failed"))
        .str("error", stepped.error())
        .num("applied_seq", applied_seq_)
        .num("retry_in_ms", delay.count());
    return false;
  }
  if (consecutive_failures_ > 0) log::info("processor_recovered").num("applied_seq", applied_seq_);
  consecutive_failures_ = 0;
  // The step that applied an unfinished rebuild's last row cleared its mark (on
  // PostgreSQL, unless other shards are still behind): said at once.
  if (const int64_t through = unfinished_rebuild(); through > 0 && applied_seq_ >= through) {
    follow_unfinished_rebuild(true);
  }
  return stepped->more;
}

Result<void> Processor::run_until_caught_up(const std::function<void(int64_t, int64_t)>& progress) {
  auto lead = store_->take_lead();
  if (!lead) return fail(lead);
  if (!*lead) return fail(ErrorKind::in_use, "another instance applies the inbox");
  if (auto synced = sync_applied_seq(); !synced) return synced;
  auto newest = store_->newest_seq();
  if (!newest) return fail(newest);
  const int64_t last_seq = *newest;
  if (progress) progress(applied_seq_, last_seq);
  // Both helpers need their own connections and threads; without them this is slower,
  // not wrong, so a failure to start one is logged and the work goes on without it. A
  // short backlog (replay calls this after every batch) is not worth two threads.
  bool helpers = last_seq - applied_seq_ >= kBackgroundHelpersMinBacklog && store_->has_helpers();
  std::unique_ptr<store::Checkpointer> checkpointer;
  if (helpers) {
    auto started = store_->start_catch_up_checkpointer();
    if (started) {
      checkpointer = std::move(*started);  // null: the backend checkpoints by itself
    } else {
      log::warn("checkpointer_not_started").str("error", started.error());
    }
  }
  std::unique_ptr<ParsePipeline> pipeline;
  while (applied_seq_ < last_seq) {
    if (helpers && !pipeline) {
      auto started = start_pipeline(applied_seq_, last_seq, ParsePipeline::Mode::catch_up);
      if (started) {
        pipeline = std::move(*started);
      } else {
        log::warn("parse_pipeline_not_started").str("error", started.error());
        helpers = false;
      }
    }
    Result<StepOutcome> stepped = step_with(pipeline, last_seq);  // read ahead again from there after a failure
    if (!stepped) {
      stats_.step_failures.fetch_add(1, std::memory_order_relaxed);
      return fail(stepped);
    }
    if (checkpointer) checkpointer->finish_on_writer();
    if (progress) progress(applied_seq_, last_seq);
    if (stepped->deliveries == 0 && !stepped->more) break;  // nothing left after applied_seq
  }
  return {};
}

Result<void> Processor::sync_applied_seq() {
  auto stored = store_->applied_seq();
  if (!stored) return fail(stored);
  if (*stored != applied_seq_) {
    store_->forget_cached_ids();
    sliced_stream_.reset();
    applied_seq_ = *stored;
    stats_.applied_seq.store(applied_seq_, std::memory_order_relaxed);
  }
  return {};
}

Result<Processor::StepOutcome> Processor::relaxed_step(int64_t last_seq) {
  if (auto relaxed = store_->relax_step_sync(); !relaxed) return fail(relaxed);
  Result<StepOutcome> stepped = live_step(last_seq);
  // Ingest commits on this connection must sync again, whatever the step did.
  if (auto restored = store_->restore_step_sync(); !restored) return fail(restored);
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
  // Not while a stream is applied in slices: a pipeline started at applied_seq_ would
  // read and parse that stream again, while the next rows it hands out are the ones after it.
  if (!live_pipeline_ && !sliced_stream_ && quiet && newest_seq - applied_seq_ >= options_.parse_ahead_min_backlog) {
    start_live_pipeline();
  }
  if (live_pipeline_ && newest_seq > applied_seq_) live_pipeline_->read_ahead(newest_seq);
}

void Processor::start_live_pipeline() {
  if (live_pipeline_unavailable_) return;
  // Slower, not wrong: without one, live steps read and parse on this thread.
  if (!store_->has_helpers()) {
    live_pipeline_unavailable_ = true;
    return;
  }
  auto started = start_pipeline(applied_seq_, applied_seq_, ParsePipeline::Mode::follow);
  if (started) {
    live_pipeline_ = std::move(*started);
    stats_.parse_ahead_starts.fetch_add(1, std::memory_order_relaxed);
  } else {
    live_pipeline_unavailable_ = true;
    log::warn("parse_pipeline_not_started").str("error", started.error());
  }
}

Result<std::unique_ptr<ParsePipeline>> Processor::start_pipeline(int64_t after_seq, int64_t last_seq,
                                                                 ParsePipeline::Mode mode) {
  auto reader = store_->open_reader(mode == ParsePipeline::Mode::follow ? store::ReaderUse::follow
                                                                        : store::ReaderUse::catch_up);
  if (!reader) return fail(reader);
  return ParsePipeline::start(std::move(*reader), after_seq, last_seq, mode);
}

Result<Processor::StepOutcome> Processor::live_step(int64_t last_seq) {
  if (live_pipeline_) live_pipeline_->extend(last_seq);
  return step_with(live_pipeline_, last_seq);  // after a failure, a new pipeline only by choose_live_source()
}

Result<Processor::StepOutcome> Processor::step_with(std::unique_ptr<ParsePipeline>& pipeline, int64_t last_seq) {
  if (pipeline) {
    Result<StepOutcome> stepped = step(*pipeline);
    if (stepped && !stepped->rejected) return stepped;
    store_->rollback_step();
    // The pipeline cannot rewind (nor follow a reset_derived() that moved applied_seq):
    // this step again inline, which marks a delivery the store rejects as invalid.
    pipeline.reset();
    store_->forget_cached_ids();
  }
  return step_marking_poisoned(last_seq);
}

Result<Processor::StepOutcome> Processor::step_marking_poisoned(int64_t last_seq) {
  poisoned_.clear();
  for (;;) {
    Result<StepOutcome> stepped = StepOutcome{};
    {
      InlineSource source(store_->deliveries(), *parser_, poisoned_, last_seq,
                          static_cast<int64_t>(options_.max_deliveries_per_step));
      stepped = step(source);
    }
    if (stepped && !stepped->rejected) return stepped;
    // Rolled back (by step(); should that ROLLBACK itself have failed, the next begin
    // would fail forever: make sure).
    store_->rollback_step();
    store_->forget_cached_ids();
    // The delivery being applied is to blame only for a data failure.
    if (!stepped) return stepped;
    PoisonedDelivery& rejected = *stepped->rejected;
    const bool already = std::any_of(poisoned_.begin(), poisoned_.end(),
                                     [&](const PoisonedDelivery& p) { return p.seq == rejected.seq; });
    if (already) return fail(ErrorKind::data, "delivery " + std::to_string(rejected.seq) + ": " + rejected.error);
    log::warn("delivery_rejected_by_store").num("seq", rejected.seq).str("error", rejected.error);
    poisoned_.push_back(std::move(rejected));
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
  if (auto begun = store_->begin_step(); !begun) return fail(begun, "begin");
  // Whatever happened, a step not committed is rolled back; the source's read of the
  // inbox ends first, so the rollback cannot fail because of it.
  struct EndStep {
    ParsedSource& source;
    store::ProcessingStore& store;
    ~EndStep() {
      source.end_step();
      store.rollback_step();
    }
  } end_step{source, *store_};
  Result<StepOutcome> stepped = sliced_stream_ ? slice_step(started) : step_in_transaction(source, started);
  if (!stepped || stepped->rejected) sliced_stream_.reset();
  return stepped;
}

Result<Processor::StepOutcome> Processor::step_in_transaction(ParsedSource& source,
                                                              std::chrono::steady_clock::time_point started) {
  if (auto synced = sync_applied_seq(); !synced) return fail(synced);

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
    if (!next) return fail(next);
    ParsedDelivery* delivery = *next;
    if (delivery == nullptr) {
      last_seq = std::max(last_seq, source.read_through());
      break;
    }
    if (take_for_slices(*delivery)) {
      more = true;  // this step ends before it; the next ones apply its slices
      break;
    }
    last_seq = delivery->seq;
    if (delivery->body_removed) {
      // Nothing to apply (a rebuild reaches these; it reports them): the outcome stays.
      outcomes_.push_back(Outcome{0, {}, {}, {}, {}});
      continue;
    }
    events::ParseResult& parsed = delivery->parse;

    if (parsed.status == rows::Status::processed) {
      auto applied = store_->apply(*delivery->rows, delivery->seq, delivery->received_at_ms);
      if (!applied && applied.error_kind() == ErrorKind::data) {
        StepOutcome rejected;
        rejected.rejected = PoisonedDelivery{delivery->seq, applied.error()};
        return rejected;
      }
      if (!applied) {
        return fail(applied, "delivery " + std::to_string(delivery->seq));
      }
      rows_seen += static_cast<size_t>(applied->rows_seen);
      rows_written += static_cast<uint64_t>(applied->rows_written);
      samples += static_cast<uint64_t>(applied->samples_written);
      jobs += static_cast<uint64_t>(applied->jobs_queued);
    }
    ++by_status[static_cast<int>(parsed.status)];
    if (parsed.status == rows::Status::invalid) {
      log::warn("delivery_invalid")
          .num("seq", delivery->seq)
          .str("family", rows::family_name(parsed.family))
          .str("error", events::without_excerpt(parsed.error));
    }
    const std::string_view status = rows::status_name(parsed.status);
    const std::string_view family = rows::family_name(parsed.family);
    // Rewriting a row rewrites its body too (20 KB for 180 samples): skip what a
    // rebuild would only write again unchanged.
    if (!same_outcome(delivery->stored, status, family, parsed.error, delivery->user_id)) {
      outcomes_.push_back(Outcome{delivery->seq, status, family, std::move(parsed.error), delivery->user_id});
    } else {
      outcomes_.push_back(Outcome{0, {}, {}, {}, {}});
    }
  }
  source.end_step();

  if (auto flushed = store_->write_changes(); !flushed) {
    return fail(flushed, "change feed");
  }
  // Written together after the loop: one call per step.
  outcome_updates_.clear();
  for (const Outcome& outcome : outcomes_) {
    if (outcome.seq != 0) {
      outcome_updates_.push_back({outcome.seq, outcome.status, outcome.family, outcome.error, outcome.user_id});
    }
  }
  if (auto set = store_->record_outcomes(outcome_updates_); !set) return fail(set);
  if (last_seq != applied_seq_) {
    if (auto set = store_->set_applied_seq(last_seq); !set) {
      return fail(set, "advancing applied_seq");
    }
  }
  if (auto committed = store_->commit_step(); !committed) {
    return fail(committed, "commit");
  }

  applied_seq_ = last_seq;
  stats_.processed.fetch_add(by_status[static_cast<int>(rows::Status::processed)], std::memory_order_relaxed);
  stats_.invalid.fetch_add(by_status[static_cast<int>(rows::Status::invalid)], std::memory_order_relaxed);
  stats_.ignored.fetch_add(by_status[static_cast<int>(rows::Status::ignored)], std::memory_order_relaxed);
  stats_.unknown.fetch_add(by_status[static_cast<int>(rows::Status::unknown)], std::memory_order_relaxed);
  stats_.samples_applied.fetch_add(samples, std::memory_order_relaxed);
  stats_.rows_applied.fetch_add(rows_written, std::memory_order_relaxed);
  stats_.jobs_queued.fetch_add(jobs, std::memory_order_relaxed);
  stats_.steps.fetch_add(1, std::memory_order_relaxed);
  stats_.applied_seq.store(applied_seq_, std::memory_order_relaxed);
  stats_.last_step_micros.store(micros_since(started), std::memory_order_relaxed);
  if (jobs > 0 && on_jobs_queued_) on_jobs_queued_();
  return StepOutcome{more, outcomes_.size(), std::nullopt};
}

bool Processor::take_for_slices(const ParsedDelivery& delivery) {
  const size_t slice_points = store_->stream_slice_points();
  if (slice_points == 0 || delivery.body_removed || delivery.parse.status != rows::Status::processed) return false;
  const auto& stream = delivery.rows->fetched_stream;
  if (!stream || stream->point_count <= slice_points) return false;
  const bool changes_outcome =
      !same_outcome(delivery.stored, rows::status_name(delivery.parse.status), rows::family_name(delivery.parse.family),
                    delivery.parse.error, delivery.user_id);
  sliced_stream_ = std::make_unique<StreamInSlices>(delivery, slice_points, changes_outcome);
  log::info("stream_in_slices")
      .num("seq", delivery.seq)
      .num("points", static_cast<int64_t>(stream->point_count))
      .num("slice_points", static_cast<int64_t>(slice_points));
  return true;
}

Result<Processor::StepOutcome> Processor::slice_step(std::chrono::steady_clock::time_point started) {
  if (auto synced = sync_applied_seq(); !synced) return fail(synced);
  if (!sliced_stream_) return StepOutcome{true, 0, std::nullopt};  // the position moved: read again from it
  StreamInSlices& stream = *sliced_stream_;
  auto applied = store_->apply(stream.next_slice(), stream.seq(), stream.received_at_ms());
  if (!applied && applied.error_kind() == ErrorKind::data) {
    StepOutcome rejected;
    rejected.rejected = PoisonedDelivery{stream.seq(), applied.error()};
    return rejected;
  }
  if (!applied) return fail(applied, "delivery " + std::to_string(stream.seq()));
  // Stale (a later fetch is stored), the first slice is the last: nothing more to write.
  const bool last = !applied->unfinished;
  if (auto flushed = store_->write_changes(); !flushed) return fail(flushed, "change feed");
  outcome_updates_.clear();
  if (last && stream.changes_outcome()) {
    outcome_updates_.push_back({stream.seq(), stream.status(), stream.family(), {}, stream.user_id()});
  }
  if (auto set = store_->record_outcomes(outcome_updates_); !set) return fail(set);
  if (last) {
    if (auto set = store_->set_applied_seq(stream.seq()); !set) return fail(set, "advancing applied_seq");
  }
  if (auto committed = store_->commit_step(); !committed) return fail(committed, "commit");

  stream.done_slice();
  stats_.rows_applied.fetch_add(static_cast<uint64_t>(applied->rows_written), std::memory_order_relaxed);
  stats_.steps.fetch_add(1, std::memory_order_relaxed);
  stats_.last_step_micros.store(micros_since(started), std::memory_order_relaxed);
  if (!last) return StepOutcome{true, 0, std::nullopt};
  log::info("stream_in_slices_applied")
      .num("seq", stream.seq())
      .num("points", static_cast<int64_t>(stream.point_count()))
      .num("slices", static_cast<int64_t>(stream.slices_done()));
  applied_seq_ = stream.seq();
  stats_.processed.fetch_add(1, std::memory_order_relaxed);
  stats_.applied_seq.store(applied_seq_, std::memory_order_relaxed);
  sliced_stream_.reset();
  return StepOutcome{true, 1, std::nullopt};
}

}  // namespace hh::processor
