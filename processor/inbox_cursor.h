#pragma once
// The processor's side of the inbox, on the write connection: reads the rows after
// processor_state.applied_seq in seq order, records each row's outcome in deliveries
// (status, family, error) and advances applied_seq. All of it happens inside the
// processor's step transaction.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/result.h"
#include "processor/parsed_delivery.h"
#include "receiver/events/delivery_parser.h"
#include "store/sqlite/connection.h"

namespace hh::processor {

struct PendingRow {
  events::InboxRow row;  // views valid until the next next() or finish()
  int64_t received_at_ms = 0;
  StoredOutcome stored;
};

// A delivery's new status, family and error ("" = NULL), for set_outcomes().
struct OutcomeUpdate {
  int64_t seq = 0;
  std::string_view status;
  std::string_view family;
  std::string_view error;
};

class InboxCursor {
 public:
  static Result<InboxCursor> create(sqlite::Connection& db);

  Result<int64_t> applied_seq();
  Result<int64_t> newest_seq();  // 0 for an empty inbox

  // Reads rows with seq > `after` in seq order, at most `limit` of them.
  void start(int64_t after, int64_t limit);
  // False when there are no more rows. Must be followed by finish() before writing.
  Result<bool> next(PendingRow& pending);
  void finish();

  // Writes every outcome, up to kMaxOutcomesPerUpdate per statement execution. Why not
  // one UPDATE per row: the CHECK on deliveries.status (`status IN (…5 values…)`) makes
  // SQLite build an ephemeral table for the list at every execution of a statement
  // (lists of more than two constants), which cost more than the update itself
  // (processor/README.md has the figures).
  Result<void> set_outcomes(std::span<const OutcomeUpdate> outcomes);
  Result<void> set_applied_seq(int64_t seq);

  static constexpr size_t kMaxOutcomesPerUpdate = 64;

 private:
  // Statements updating 64, 8 and 1 rows; a batch is written largest first.
  static constexpr std::array<size_t, 3> kOutcomeRows = {kMaxOutcomesPerUpdate, 8, 1};

  InboxCursor(sqlite::Statement applied, sqlite::Statement newest, sqlite::Statement select,
              std::array<sqlite::Statement, 3> outcomes, sqlite::Statement advance)
      : applied_(std::move(applied)),
        newest_(std::move(newest)),
        select_(std::move(select)),
        outcomes_(std::move(outcomes)),
        advance_(std::move(advance)) {}
  sqlite::Statement applied_, newest_, select_;
  std::array<sqlite::Statement, 3> outcomes_;  // by kOutcomeRows
  sqlite::Statement advance_;
};

}  // namespace hh::processor
