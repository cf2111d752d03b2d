// Fuzzes a webhook body through the processor's entry point, DeliveryParser::parse (the
// envelope and every event family), the way the processor sees it: once with the
// event_type the receiver peeked at ingest (deliveries.event_type), once without (a row
// whose event type could not be read at ingest, so the parser finds it in the body).
// Seeds: every schemas/examples/*.json.
//
// Properties besides "no crash" (delivery_rows_checks.h for the per-row ones):
//  - both ways agree on status, family and error when the peek found the event type;
//  - a second parse of the same row by the same (reused) parser gives the same result;
//  - a row that is not invalid was valid JSON throughout (fetcher::check_json agrees).
#include <cstdint>
#include <string>
#include <string_view>

#include "delivery_rows_checks.h"
#include "events/envelope_peek.h"

using namespace hh;

namespace {

events::ParseResult parse_checked(events::DeliveryParser& parser, const rows::InboxRow& row,
                                  rows::DeliveryRows& rows) {
  events::ParseResult result = parser.parse(row, rows);
  fuzz::check_parse(result, rows);
  return result;
}

bool same(const events::ParseResult& a, const events::ParseResult& b) {
  return a.status == b.status && a.family == b.family && a.error == b.error;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static events::DeliveryParser parser;
  static rows::DeliveryRows rows;
  // The body as the inbox hands it over: exactly `size` bytes, no padding after them, so
  // AddressSanitizer sees any read past the end.
  const std::string body(reinterpret_cast<const char*>(data), size);
  const std::optional<std::string> peeked = events::peek_event_type(body);

  const rows::InboxRow from_body{1, "webhook", "", "{}", body};
  const events::ParseResult without = parse_checked(parser, from_body, rows);
  if (without.status != rows::Status::invalid) {
    if (auto valid = json::check_json(body, 1024); !valid) fuzz::broken("parsed a body that is not JSON", valid.error());
  }
  if (!same(without, parse_checked(parser, from_body, rows))) fuzz::broken("second parse differs");

  if (peeked) {
    const rows::InboxRow from_column{2, "webhook", *peeked, "{}", body};
    const events::ParseResult with = parse_checked(parser, from_column, rows);
    if (!same(with, without)) fuzz::broken("parse with the peeked event_type differs", with.error + " / " + without.error);
  }
  return 0;
}
