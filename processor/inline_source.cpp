#include "processor/inline_source.h"

#include <algorithm>
#include <exception>

#include "rows/delivery_user.h"

namespace hh::processor {

events::ParseResult parse_guarded(events::DeliveryParser& parser, const store::PendingDelivery& pending,
                                  rows::DeliveryRows& delivery_rows) {
  if (pending.body_removed) {
    delivery_rows.clear();
    return {};
  }
  const rows::InboxRow& row = pending.row;
  try {
    return parser.parse(row, delivery_rows);
  } catch (const std::exception& e) {
    delivery_rows.clear();
    events::ParseResult result;
    result.status = rows::Status::invalid;
    result.error = std::string("parser failed: ") + e.what();
    return result;
  }
}

void delivery_user_after_parse(const store::PendingDelivery& pending, const events::ParseResult& parsed,
                               const rows::DeliveryRows& delivery_rows, std::string& user) {
  user.clear();
  if (pending.body_removed) return;  // no outcome is written for it
  if (parsed.status != rows::Status::invalid && delivery_rows.delivery_user) {
    user.assign(*delivery_rows.delivery_user);
    return;
  }
  // Processed rows that name nobody (a provider list) are rare; invalid ones too.
  const rows::InboxRow& row = pending.row;
  if (auto named = rows::delivery_user_of(row.origin, row.headers_json, row.body)) user = std::move(*named);
}

Result<ParsedDelivery*> InlineSource::next(int64_t after_seq) {
  if (!started_) {
    cursor_.start(after_seq, last_seq_, limit_);
    started_ = true;
    exhausted_ = false;
  }
  auto row = cursor_.next(pending_);
  if (!row) return fail(row, "reading the inbox");
  if (!*row) {
    exhausted_ = true;
    return static_cast<ParsedDelivery*>(nullptr);
  }
  current_.seq = pending_.row.seq;
  current_.received_at_ms = pending_.received_at_ms;
  current_.stored = pending_.stored;
  current_.body_removed = pending_.body_removed;
  current_.parse = parse_guarded(parser_, pending_, rows_);
  current_.rows = &rows_;
  delivery_user_after_parse(pending_, current_.parse, rows_, current_.user_id);
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
