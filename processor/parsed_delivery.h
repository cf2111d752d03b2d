#pragma once
// One inbox row, parsed and ready to apply, and where such rows come from: read and
// parsed on the applying thread (InlineSource) or by a parse thread running ahead
// (ParsePipeline: catch-up, and live steps). Both hand rows out in seq order.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "events/delivery_parser.h"
#include "store/processing_store.h"

namespace hh::processor {

struct ParsedDelivery {
  int64_t seq = 0;
  int64_t received_at_ms = 0;
  events::ParseResult parse;
  const rows::DeliveryRows* rows = nullptr;
  store::StoredOutcome stored;
  bool body_removed = false;  // by retention: not parsed, nothing to apply, outcome kept
  // Whom the row names ("" nobody), recorded with its outcome: DeliveryRows::delivery_user,
  // else (an invalid row) read from the row itself (rows/delivery_user.h).
  std::string user_id;
  // Valid until the source's next next() or end_step().
};

// A delivery whose rows the store rejected (a constraint): on the retry of the step it
// is marked invalid with `error` instead of being applied.
struct PoisonedDelivery {
  int64_t seq;
  std::string error;
};

class ParsedSource {
 public:
  virtual ~ParsedSource() = default;
  // The next row after `after_seq` (the first call of a step) or after the previous one;
  // nullptr when there is none. Views stay valid until the next call or end_step().
  virtual Result<ParsedDelivery*> next(int64_t after_seq) = 0;
  // The step is over (committed or not): release what next() handed out.
  virtual void end_step() = 0;
  // After next() returned nullptr: every row up to this seq was handed out (the step's
  // bound), so the applied position may move there even past the last row handed out
  // (on PostgreSQL the rows between belong to other sessions' shards, or to none). 0
  // when that is not known.
  virtual int64_t read_through() const = 0;
};

}  // namespace hh::processor
