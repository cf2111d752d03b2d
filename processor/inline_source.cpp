#include "processor/inline_source.h"

#include <algorithm>
#include <exception>

namespace hh::processor {

events::ParseResult parse_guarded(events::DeliveryParser& parser, const store::PendingDelivery& pending,
                                  rows::DeliveryRows& rows) {
  if (pending.body_removed) {
    rows.clear();
    return {};
  }
  const rows::InboxRow& row = pending.row;
  try {
    return parser.parse(row, rows);
  } catch (const std::exception& e) {
    rows.clear();
    events::ParseResult result;
    result.status = rows::Status::invalid;
    result.error = std::string("parser failed: ") + e.what();
    return result;
  }
}

Result<ParsedDelivery*> InlineSource::next(int64_t after_seq) {
  if (!started_) {
    cursor_.start(after_seq, last_seq_, limit_);
    started_ = true;
  }
  auto row = cursor_.next(pending_);
  if (!row) return fail(row.error_kind(), "reading the inbox: " + row.error());
  if (!*row) return static_cast<ParsedDelivery*>(nullptr);
  current_.seq = pending_.row.seq;
  current_.received_at_ms = pending_.received_at_ms;
  current_.stored = pending_.stored;
  current_.body_removed = pending_.body_removed;
  current_.parse = parse_guarded(parser_, pending_, rows_);
  current_.rows = &rows_;
  auto poisoned = std::find_if(poisoned_.begin(), poisoned_.end(),
                               [&](const PoisonedDelivery& p) { return p.seq == current_.seq; });
  if (poisoned != poisoned_.end()) {
    // Parsed fine before, then rejected by the store: keep the family, report the store's error.
    current_.parse.status = rows::Status::invalid;
    current_.parse.error = poisoned->error;
    rows_.clear();
  }
  return &current_;
}

void InlineSource::end_step() {
  if (started_) cursor_.finish();
  started_ = false;
}

}  // namespace hh::processor
