#include "processor/parse_pipeline.h"

#include <algorithm>
#include <optional>
#include <system_error>

#include "common/thread_name.h"
#include "processor/inline_source.h"

namespace hh::processor {

struct ParsePipeline::Slot {
  std::optional<events::DeliveryParser> parser{std::in_place};  // optional: emplace() frees its buffers
  rows::DeliveryRows rows;
  ParsedDelivery parsed;
  // Owned copies: the parser's rows and `stored` point into these.
  std::string origin, event_type, headers, body, status, family, error, user;
  size_t bytes = 0;

  // Gives back what a body over kTrimAbove made the slot keep: the body's copy, the
  // parser's buffers (they grow to the largest document and stay), the rows. A slot that
  // parsed a 30 MB fetched page would otherwise hold ~60 MB for the life of `serve`.
  void trim() {
    body = std::string();
    headers = std::string();
    rows = rows::DeliveryRows();
    parser.emplace();
  }
};

Result<std::unique_ptr<ParsePipeline>> ParsePipeline::start(std::unique_ptr<store::DeliveryCursor> reader,
                                                            int64_t after_seq, int64_t last_seq, Mode mode) {
  std::unique_ptr<ParsePipeline> pipeline(new ParsePipeline(std::move(reader), after_seq, last_seq, mode));
  // No thread to be had (a tasks limit, e.g. systemd's TasksMax): the caller parses on its
  // own thread instead, slower but not wrong.
  try {
    pipeline->thread_ = start_named_thread("hh-parse", [p = pipeline.get()] { p->read_all(); });
  } catch (const std::system_error& e) {
    return fail(ErrorKind::unavailable, std::string("no parse thread: ") + e.what());
  }
  return pipeline;
}

ParsePipeline::ParsePipeline(std::unique_ptr<store::DeliveryCursor> reader, int64_t after_seq, int64_t last_seq,
                             Mode mode)
    : reader_(std::move(reader)),
      next_after_seq_(after_seq),
      mode_(mode),
      last_seq_(last_seq),
      step_end_seq_(last_seq),
      handed_out_seq_(after_seq) {
  for (size_t i = 0; i < kSlots; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    free_.push_back(slots_.back().get());
  }
}

ParsePipeline::~ParsePipeline() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  to_reader_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void ParsePipeline::read_all() {
  for (;;) {
    auto more = read_chunk();
    std::unique_lock lock(mutex_);
    if (!more) error_ = more.error();
    if (more && !*more && mode_ == Mode::follow) {
      // Every row up to the chunk's bound is read (seqs may have gaps): tell next(), and
      // wait until extend() moves the end.
      caught_up_to_ = chunk_last_seq_;
      to_applier_.notify_one();
      to_reader_.wait(lock, [&] { return stopping_ || caught_up_to_ < last_seq_; });
      if (!stopping_) continue;
    }
    if (!more || !*more || stopping_) {
      finished_ = true;
      to_applier_.notify_one();
      return;
    }
  }
}

void ParsePipeline::extend(int64_t last_seq) {
  if (mode_ != Mode::follow) return;
  step_end_seq_ = std::max(step_end_seq_, last_seq);
  read_ahead(last_seq);
}

void ParsePipeline::read_ahead(int64_t committed_seq) {
  {
    std::lock_guard lock(mutex_);
    if (mode_ != Mode::follow || committed_seq <= last_seq_) return;
    last_seq_ = committed_seq;
  }
  to_reader_.notify_one();
}

Result<bool> ParsePipeline::read_chunk() {
  int64_t last_seq = 0;
  {
    std::lock_guard lock(mutex_);
    last_seq = last_seq_;
  }
  chunk_last_seq_ = last_seq;
  reader_->start(next_after_seq_, last_seq, kChunkRows);
  int64_t rows = 0;
  for (;;) {
    auto row = reader_->next(pending_);
    if (!row) return fail(row, "reading the inbox");
    if (!*row) break;
    Slot* slot = acquire(pending_.row.body.size());
    if (slot == nullptr) {
      reader_->finish();
      return false;
    }
    slot->origin.assign(pending_.row.origin);
    slot->event_type.assign(pending_.row.event_type);
    slot->headers.assign(pending_.row.headers_json);
    slot->body.assign(pending_.row.body);
    slot->status.assign(pending_.stored.status);
    const bool has_family = pending_.stored.family.has_value(), has_error = pending_.stored.error.has_value();
    const bool has_user = pending_.stored.user_id.has_value();
    slot->family.assign(pending_.stored.family.value_or(std::string_view()));
    slot->error.assign(pending_.stored.error.value_or(std::string_view()));
    slot->user.assign(pending_.stored.user_id.value_or(std::string_view()));

    ParsedDelivery& parsed = slot->parsed;
    parsed.seq = pending_.row.seq;
    parsed.body_removed = pending_.body_removed;
    parsed.received_at_ms = pending_.received_at_ms;
    parsed.stored = store::StoredOutcome{slot->status, has_family ? std::optional<std::string_view>(slot->family) : std::nullopt,
                                  has_error ? std::optional<std::string_view>(slot->error) : std::nullopt,
                                  has_user ? std::optional<std::string_view>(slot->user) : std::nullopt};
    store::PendingDelivery copy = pending_;  // its views now point into the slot
    copy.row = rows::InboxRow{parsed.seq, slot->origin, slot->event_type, slot->headers, slot->body};
    parsed.parse = parse_guarded(*slot->parser, copy, slot->rows);
    parsed.rows = &slot->rows;
    delivery_user_after_parse(copy, parsed.parse, slot->rows, parsed.user_id);
    next_after_seq_ = parsed.seq;
    ++rows;
    rows_parsed_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex_);
      ready_.push_back(slot);
    }
    to_applier_.notify_one();
  }
  reader_->finish();  // ends this chunk's read
  return rows == kChunkRows && next_after_seq_ < last_seq;
}

ParsePipeline::Slot* ParsePipeline::acquire(size_t body_bytes) {
  std::unique_lock lock(mutex_);
  reader_wants_room_ = true;
  to_reader_.wait(lock, [&] {
    return stopping_ || (!free_.empty() && (bytes_ahead_ == 0 || bytes_ahead_ + body_bytes <= kMaxBytesAhead));
  });
  reader_wants_room_ = false;
  if (stopping_) return nullptr;
  Slot* slot = free_.back();
  free_.pop_back();
  slot->bytes = body_bytes;
  bytes_ahead_ += body_bytes;
  return slot;
}

void ParsePipeline::trim_current() {
  if (current_ == nullptr || current_->bytes <= kTrimAbove) return;
  current_->trim();
  ++slot_trims_;
}

bool ParsePipeline::release_current() {
  if (current_ == nullptr) return false;
  bytes_ahead_ -= current_->bytes;
  free_.push_back(current_);
  current_ = nullptr;
  return reader_wants_room_;
}

Result<ParsedDelivery*> ParsePipeline::next(int64_t after_seq) {
  if (after_seq != handed_out_seq_) {
    return fail("parse pipeline: asked for rows after " + std::to_string(after_seq) + ", is at " +
                std::to_string(handed_out_seq_));
  }
  trim_current();  // before the lock: the slot is still this thread's
  std::unique_lock lock(mutex_);
  if (release_current()) to_reader_.notify_one();
  // Following, the step ends at extend()'s bound; rows read ahead past it wait in ready_.
  const bool following = mode_ == Mode::follow;
  // Every row up to the step's end is handed out: the next step starts from there (the
  // applied position moves to it: ParsedSource::read_through()).
  const auto at_step_end = [&] {
    handed_out_seq_ = std::max(handed_out_seq_, step_end_seq_);
    return static_cast<ParsedDelivery*>(nullptr);
  };
  if (following && handed_out_seq_ >= step_end_seq_) return at_step_end();
  to_applier_.wait(lock, [&] { return !ready_.empty() || finished_ || (following && caught_up_to_ >= step_end_seq_); });
  if (ready_.empty()) {
    if (!error_.empty()) return fail(error_);
    return at_step_end();
  }
  if (ready_.front()->parsed.seq > step_end_seq_) return at_step_end();
  current_ = ready_.front();
  ready_.pop_front();
  handed_out_seq_ = current_->parsed.seq;
  return &current_->parsed;
}

void ParsePipeline::end_step() {
  trim_current();
  bool reader_waits = false;
  {
    std::lock_guard lock(mutex_);
    reader_waits = release_current();
  }
  if (reader_waits) to_reader_.notify_one();
}

}  // namespace hh::processor
