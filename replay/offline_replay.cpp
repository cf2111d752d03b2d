#include "replay/offline_replay.h"

#include <boost/beast/core/string.hpp>  // iequals: ASCII case-insensitive

#include <chrono>
#include <optional>
#include <vector>

#include "processor/processor.h"
#include "events/envelope_peek.h"
#include "receiver/signature/signature_headers.h"
#include "replay/sendable_headers.h"

namespace hh::replay {
namespace {

std::string_view header(const CaptureRecord& record, std::string_view name) {
  for (const auto& h : record.headers) {
    if (boost::beast::iequals(h.name, name)) return h.value;
  }
  return {};
}

}  // namespace

struct OfflineReplay::Impl {
  Impl(OfflineOptions opts, std::unique_ptr<store::Inbox> store_inbox, std::unique_ptr<processor::Processor> proc)
      : options(std::move(opts)), inbox(std::move(store_inbox)), processor(std::move(proc)) {
    batch.resize(options.batch_deliveries);
    pointers.reserve(options.batch_deliveries);
  }

  OfflineOptions options;
  std::unique_ptr<store::Inbox> inbox;
  std::unique_ptr<processor::Processor> processor;
  std::vector<store::NewDelivery> batch;  // reused: strings keep their capacity
  std::vector<const store::NewDelivery*> pointers;
  size_t batch_count = 0;
  size_t batch_bytes = 0;
  size_t unprocessed = 0;  // stored since the processor last ran
  Progress* progress = nullptr;  // the caller's, while add() runs and for finish()
  CaptureRecord record;
  std::string timestamp_text;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  // Moves `record` into the next batch slot (its body buffer is swapped, not copied).
  void stage(CaptureRecord& r) {
    store::NewDelivery& d = batch[batch_count++];
    d.message_id.assign(r.id);
    d.origin = store::Origin::webhook;
    d.received_at_ms = r.timestamp * 1000;
    d.webhook_timestamp = r.timestamp;
    d.event_type = events::peek_event_type(r.body);
    d.headers_json.clear();
    append_headers_json(d.headers_json, r.headers);
    std::swap(d.body, r.body);
    batch_bytes += d.body.size();
  }

  bool batch_full() const {
    return batch_count == options.batch_deliveries || batch_bytes >= options.batch_bytes;
  }

  Result<void> store_batch(OfflineSummary& summary) {
    if (batch_count == 0) return {};
    pointers.clear();
    for (size_t i = 0; i < batch_count; ++i) pointers.push_back(&batch[i]);
    auto appended = inbox->append(pointers);
    if (!appended) return fail(appended, "storing deliveries");
    for (const auto& a : *appended) {
      switch (a.status) {
        case store::AppendStatus::stored: ++summary.stored; break;
        case store::AppendStatus::duplicate: ++summary.duplicates; break;
        case store::AppendStatus::too_large: ++summary.failed; break;  // over the store's row limit
      }
    }
    unprocessed += batch_count;
    batch_count = 0;
    batch_bytes = 0;
    return unprocessed >= options.process_every ? process() : Result<void>{};
  }

  Result<void> process() {
    unprocessed = 0;
    // A phase of its own on the terminal: applying 20,000 deliveries can take seconds.
    std::optional<Progress> applying;
    int64_t first_applied = -1;
    if (progress) applying.emplace("applying");
    const auto report = [&](int64_t applied, int64_t last) {
      if (first_applied < 0) first_applied = applied;
      applying->set_total(static_cast<uint64_t>(last - first_applied));
      applying->update(static_cast<uint64_t>(applied - first_applied));
    };
    auto applied = processor->run_until_caught_up(applying ? std::function<void(int64_t, int64_t)>(report) : nullptr);
    if (!applied) return fail(applied, "processing deliveries");
    return {};
  }

  // What the processor applied so far, into `summary`: also when a store failure stops the
  // replay, since what was applied before it stays applied.
  void take_outcomes(OfflineSummary& summary) const {
    const auto& stats = processor->stats();
    summary.processed = stats.processed.load();
    summary.invalid = stats.invalid.load();
    summary.ignored = stats.ignored.load();
    summary.unknown = stats.unknown.load();
    summary.samples = stats.samples_applied.load();
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  // The verifier's verdict on the line's own id, timestamp and body, or "" when it passes.
  std::string_view check_signature(const CaptureRecord& r) {
    // The signature list of the family the live check would use (signature_headers.h); the
    // id and timestamp are the line's own.
    signature::SignatureHeaderSet stored;
    for (const auto& h : r.headers) stored.add(h.name, h.value);
    std::string_view signature_header = stored.pick().signature;
    if (signature_header.empty()) signature_header = header(r, "svix-signature");
    if (signature_header.empty()) signature_header = header(r, "webhook-signature");
    timestamp_text = std::to_string(r.timestamp);
    const signature::SignedHeaders signed_headers{r.id, timestamp_text, signature_header};
    const auto verdict = options.verifier->verify(signed_headers, r.body, r.timestamp);
    return verdict == signature::Verdict::ok ? std::string_view() : signature::verdict_reason(verdict);
  }
};

OfflineReplay::OfflineReplay(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OfflineReplay::~OfflineReplay() = default;

Result<std::unique_ptr<OfflineReplay>> OfflineReplay::create(store::Store& store, OfflineOptions options) {
  if (options.batch_deliveries == 0) options.batch_deliveries = 1;
  if (options.process_every == 0) options.process_every = 1;
  auto processing = store.open_processing();
  if (!processing) return fail(processing);
  auto processor = processor::Processor::create(std::move(*processing), processor::kCatchUpSteps);
  if (!processor) return fail(processor);
  auto inbox = store.open_inbox();
  if (!inbox) return fail(inbox);
  auto impl = std::make_unique<Impl>(std::move(options), std::move(*inbox), std::move(*processor));
  return std::unique_ptr<OfflineReplay>(new OfflineReplay(std::move(impl)));
}

Result<void> OfflineReplay::add(CaptureReader& reader, const LineReport& report, Progress* progress,
                                uint64_t progress_base) {
  Impl& r = *impl_;
  r.progress = progress;
  std::string error;
  for (;;) {
    auto next = reader.next(r.record, error);
    if (!next) return fail(next);
    if (*next == CaptureReader::Next::end) break;
    if (progress) progress->update(progress_base + reader.bytes_consumed());
    ++summary_.lines;  // every line but blank ones, malformed ones too
    if (*next == CaptureReader::Next::bad_line) {
      ++summary_.failed;
      report(reader.name(), reader.line_number(), error);
      continue;
    }
    if (r.record.body_removed) {
      ++summary_.bodies_removed;
      continue;
    }
    // A line `replay --to` cannot send is not stored here either: the two replays agree.
    if (const std::string unsendable = unsendable_header(r.record.headers); !unsendable.empty()) {
      ++summary_.failed;
      report(reader.name(), reader.line_number(), unsendable);
      continue;
    }
    if (r.options.max_body_bytes > 0 && r.record.body.size() > r.options.max_body_bytes) {
      ++summary_.failed;
      report(reader.name(), reader.line_number(),
             "body: " + std::to_string(r.record.body.size()) + " bytes, larger than max_body_bytes (" +
                 std::to_string(r.options.max_body_bytes) + "): the receiver refuses it (413), so replay does too");
      continue;
    }
    if (r.options.verifier) {
      if (const auto reason = r.check_signature(r.record); !reason.empty()) {
        ++summary_.failed;
        report(reader.name(), reader.line_number(), "signature: " + std::string(reason));
        continue;
      }
    }
    r.stage(r.record);
    if (r.batch_full()) {
      if (auto stored = r.store_batch(summary_); !stored) {
        r.take_outcomes(summary_);
        return stored;
      }
    }
  }
  return {};
}

Result<void> OfflineReplay::finish() {
  Impl& r = *impl_;
  auto finished = [&]() -> Result<void> {
    if (auto stored = r.store_batch(summary_); !stored) return stored;
    return r.process();
  }();
  r.take_outcomes(summary_);
  return finished;
}

}  // namespace hh::replay
