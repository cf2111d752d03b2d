#pragma once
// The processor's side of the inbox, on the write connection: reads the rows after
// processor_state.applied_seq in seq order (the `deliveries` view: inbox row and outcome),
// records each row's outcome (status, family, error) in delivery_outcomes and advances
// applied_seq. All of it happens inside the processor's step transaction.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstdint>
#include <span>
#include <string_view>

#include "common/result.h"
#include "processor/parsed_delivery.h"
#include "events/delivery_parser.h"
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

  // Reads rows with `after` < seq <= `last` in seq order, at most `limit` of them.
  void start(int64_t after, int64_t last, int64_t limit);
  // False when there are no more rows. Must be followed by finish() before writing.
  Result<bool> next(PendingRow& pending);
  void finish();

  // Inserts or replaces each delivery's row in delivery_outcomes.
  Result<void> set_outcomes(std::span<const OutcomeUpdate> outcomes);
  Result<void> set_applied_seq(int64_t seq);

  InboxCursor(sqlite::Statement applied, sqlite::Statement newest, sqlite::Statement select,
              sqlite::Statement outcome, sqlite::Statement advance)
      : applied_(std::move(applied)),
        newest_(std::move(newest)),
        select_(std::move(select)),
        outcome_(std::move(outcome)),
        advance_(std::move(advance)) {}
  sqlite::Statement applied_, newest_, select_;
  sqlite::Statement outcome_;  // upsert of one delivery_outcomes row
  sqlite::Statement advance_;
};

}  // namespace hh::processor
