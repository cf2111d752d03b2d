#include "processor/inbox_cursor.h"

#include <string>

namespace hh::processor {

Result<InboxCursor> InboxCursor::create(sqlite::Connection& db) {
  auto applied = db.prepare("SELECT applied_seq FROM processor_state WHERE id = 1");
  if (!applied) return fail(applied.error());
  auto newest = db.prepare("SELECT seq FROM inbox ORDER BY seq DESC LIMIT 1");
  if (!newest) return fail(newest.error());
  auto select = db.prepare(
      "SELECT seq, origin, received_at, event_type, headers, body, status, family, error FROM deliveries "
      "WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3");
  if (!select) return fail(select.error());
  // One row per execution. The multi-row UPDATEs used before 004 only paid off because of
  // the IN (…) CHECK on deliveries.status (a temporary b-tree per execution); with the
  // OR-chain CHECK of delivery_outcomes a single-row insert is cheap
  // (docs/decisions/015-change-feed-batches-and-or-checks.md).
  auto outcome = db.prepare(
      "INSERT INTO delivery_outcomes (seq, status, family, error) VALUES (?1, ?2, ?3, ?4) "
      "ON CONFLICT (seq) DO UPDATE SET status = excluded.status, family = excluded.family, error = excluded.error");
  if (!outcome) return fail(outcome.error());
  auto advance = db.prepare("UPDATE processor_state SET applied_seq = ?1 WHERE id = 1");
  if (!advance) return fail(advance.error());
  return InboxCursor(std::move(*applied), std::move(*newest), std::move(*select), std::move(*outcome),
                     std::move(*advance));
}

Result<int64_t> InboxCursor::applied_seq() {
  auto row = applied_.step();
  if (!row) return fail(row.error());
  const int64_t seq = *row ? applied_.column_int(0) : 0;
  applied_.reset();
  if (!*row) return fail("processor_state has no row (database not migrated?)");
  return seq;
}

Result<int64_t> InboxCursor::newest_seq() {
  auto row = newest_.step();
  if (!row) return fail(row.error());
  const int64_t seq = *row ? newest_.column_int(0) : 0;
  newest_.reset();
  return seq;
}

void InboxCursor::start(int64_t after, int64_t last, int64_t limit) {
  select_.bind(1, after).bind(2, last).bind(3, limit);
}

Result<bool> InboxCursor::next(PendingRow& pending) {
  auto row = select_.step();
  if (!row) return fail(row.error());
  if (!*row) return false;
  pending.row.seq = select_.column_int(0);
  pending.row.origin = select_.column_text(1);
  pending.received_at_ms = select_.column_int(2);
  pending.row.event_type = select_.column_text(3);  // "" for NULL
  pending.row.headers_json = select_.column_text(4);
  pending.row.body = select_.column_blob(5);
  pending.stored.status = select_.column_text(6);
  pending.stored.family = select_.column_optional_text(7);
  pending.stored.error = select_.column_optional_text(8);
  return true;
}

void InboxCursor::finish() { select_.reset(); }

Result<void> InboxCursor::set_outcomes(std::span<const OutcomeUpdate> outcomes) {
  for (const OutcomeUpdate& outcome : outcomes) {
    outcome_.bind(1, outcome.seq).bind_static(2, outcome.status).bind_static(3, outcome.family);
    if (outcome.error.empty()) {
      outcome_.bind_null(4);
    } else {
      outcome_.bind_static(4, outcome.error);
    }
    if (auto set = outcome_.run(); !set) {
      return fail("recording the outcome of delivery " + std::to_string(outcome.seq) + ": " + set.error());
    }
  }
  return {};
}

Result<void> InboxCursor::set_applied_seq(int64_t seq) { return advance_.bind(1, seq).run(); }

}  // namespace hh::processor
