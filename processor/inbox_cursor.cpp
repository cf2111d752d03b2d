#include "processor/inbox_cursor.h"

#include <optional>
#include <string>

namespace hh::processor {
namespace {

// UPDATE … FROM (VALUES (seq, status, family, error), …): one execution for `rows` rows,
// each found by its seq (the plan searches deliveries by rowid for each VALUES row).
std::string outcome_update_sql(size_t rows) {
  std::string sql = "UPDATE deliveries SET status = v.column2, family = v.column3, error = v.column4 FROM (VALUES ";
  for (size_t i = 0; i < rows; ++i) {
    const size_t p = i * 4;
    if (i > 0) sql += ", ";
    sql += "(?" + std::to_string(p + 1) + ", ?" + std::to_string(p + 2) + ", ?" + std::to_string(p + 3) + ", ?" +
           std::to_string(p + 4) + ")";
  }
  sql += ") AS v WHERE deliveries.seq = v.column1";
  return sql;
}

}  // namespace

Result<InboxCursor> InboxCursor::create(sqlite::Connection& db) {
  auto applied = db.prepare("SELECT applied_seq FROM processor_state WHERE id = 1");
  if (!applied) return fail(applied.error());
  auto newest = db.prepare("SELECT seq FROM deliveries ORDER BY seq DESC LIMIT 1");
  if (!newest) return fail(newest.error());
  auto select = db.prepare(
      "SELECT seq, origin, received_at, event_type, headers, body, status, family, error FROM deliveries "
      "WHERE seq > ?1 ORDER BY seq LIMIT ?2");
  if (!select) return fail(select.error());
  std::array<std::optional<sqlite::Statement>, kOutcomeRows.size()> prepared;
  for (size_t i = 0; i < kOutcomeRows.size(); ++i) {
    auto outcome = db.prepare(kOutcomeRows[i] == 1
                                  ? std::string("UPDATE deliveries SET status = ?2, family = ?3, error = ?4 WHERE seq = ?1")
                                  : outcome_update_sql(kOutcomeRows[i]));
    if (!outcome) return fail(outcome.error());
    prepared[i].emplace(std::move(*outcome));
  }
  auto advance = db.prepare("UPDATE processor_state SET applied_seq = ?1 WHERE id = 1");
  if (!advance) return fail(advance.error());
  return InboxCursor(std::move(*applied), std::move(*newest), std::move(*select),
                     {std::move(*prepared[0]), std::move(*prepared[1]), std::move(*prepared[2])}, std::move(*advance));
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

void InboxCursor::start(int64_t after, int64_t limit) { select_.bind(1, after).bind(2, limit); }

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
  size_t done = 0;
  for (size_t i = 0; i < kOutcomeRows.size(); ++i) {
    const size_t rows = kOutcomeRows[i];
    sqlite::Statement& update = outcomes_[i];
    while (outcomes.size() - done >= rows) {
      for (size_t r = 0; r < rows; ++r) {
        const OutcomeUpdate& outcome = outcomes[done + r];
        const int p = static_cast<int>(r * 4);
        update.bind(p + 1, outcome.seq).bind_static(p + 2, outcome.status).bind_static(p + 3, outcome.family);
        if (outcome.error.empty()) {
          update.bind_null(p + 4);
        } else {
          update.bind_static(p + 4, outcome.error);
        }
      }
      if (auto set = update.run(); !set) {
        return fail("recording the outcome of deliveries " + std::to_string(outcomes[done].seq) + ".." +
                    std::to_string(outcomes[done + rows - 1].seq) + ": " + set.error());
      }
      done += rows;
    }
  }
  return {};
}

Result<void> InboxCursor::set_applied_seq(int64_t seq) { return advance_.bind(1, seq).run(); }

}  // namespace hh::processor
