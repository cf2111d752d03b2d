#pragma once
// Reads and parses inbox rows on the calling thread, inside the step's transaction: live
// steps while deliveries arrive, short catch-ups, and the step after a failed one (a
// ParsePipeline cannot rewind).
// Deliveries listed as poisoned (the store rejected their rows in an earlier attempt of
// this step) come out `invalid` with that error, unapplied.
//
// Lifetime: the cursor (the store's, on the step's transaction) and parser must outlive
// this object.
#include <string>
#include <vector>

#include "processor/parsed_delivery.h"
#include "store/processing_store.h"

namespace hh::processor {

class InlineSource final : public ParsedSource {
 public:
  // Hands out at most `limit` rows, none after `last_seq`.
  InlineSource(store::DeliveryCursor& cursor, events::DeliveryParser& parser, const std::vector<PoisonedDelivery>& poisoned,
               int64_t last_seq, int64_t limit)
      : cursor_(cursor), parser_(parser), poisoned_(poisoned), last_seq_(last_seq), limit_(limit) {}
  ~InlineSource() override { end_step(); }

  Result<ParsedDelivery*> next(int64_t after_seq) override;
  void end_step() override;
  int64_t read_through() const override { return exhausted_ ? last_seq_ : 0; }

 private:
  store::DeliveryCursor& cursor_;
  events::DeliveryParser& parser_;
  const std::vector<PoisonedDelivery>& poisoned_;
  const int64_t last_seq_;
  const int64_t limit_;
  bool started_ = false;
  bool exhausted_ = false;  // the cursor had no row left up to last_seq_
  store::PendingDelivery pending_;
  rows::DeliveryRows rows_;
  ParsedDelivery current_;
};

// Parses with the parser's no-throw contract enforced: an exception (a bug, or memory
// exhausted) makes the row invalid instead of ending the processor. A row whose body
// retention removed is not parsed (no rows; the processor keeps its outcome).
events::ParseResult parse_guarded(events::DeliveryParser& parser, const store::PendingDelivery& pending,
                                  rows::DeliveryRows& delivery_rows);

// Whom the parsed row names, into `user` ("" nobody): what the parse said, else (an invalid
// row, or one whose parse did not name a user) what the row itself says. Cheap for the
// rows the parser understood; a second look at the body only for the others.
void delivery_user_after_parse(const store::PendingDelivery& pending, const events::ParseResult& parsed,
                               const rows::DeliveryRows& delivery_rows, std::string& user);

}  // namespace hh::processor
