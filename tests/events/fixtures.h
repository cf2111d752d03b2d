#pragma once
// Test helpers: the example payloads of schemas/examples/ (HEALTHHOOK_SCHEMAS_DIR) and a
// parser with its rows kept together, because the rows' views live in the parser.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "events/delivery_parser.h"
#include "tests/support/examples.h"

namespace hh::events {
// The parser's output types (rows/delivery_rows.h), named unqualified by the parser's tests.
using namespace hh::rows;
}  // namespace hh::events

namespace hh::events::test {

inline std::string read_example(std::string_view name) { return hh::test::example_file(std::string(name)); }

struct ParserFixture {
  ParserFixture() = default;
  explicit ParserFixture(const ParseLimits& limits) : parser(limits) {}

  DeliveryParser parser;
  DeliveryRows rows;
  std::string body;
  std::string context;

  // A webhook row; `event_type` empty means "read it from the body".
  ParseResult webhook(std::string text, std::string_view event_type = {}) {
    body = std::move(text);
    InboxRow row;
    row.seq = 1;
    row.origin = "webhook";
    row.event_type = event_type;
    row.headers_json = "{}";
    row.body = body;
    return parser.parse(row, rows);
  }
  ParseResult example(std::string_view name, std::string_view event_type = {}) {
    return webhook(read_example(name), event_type);
  }
  ParseResult fetched(std::string context_json, std::string text, std::string_view event_type = "fetch") {
    context = std::move(context_json);
    body = std::move(text);
    InboxRow row;
    row.seq = 2;
    row.origin = "fetch";
    row.event_type = event_type;
    row.headers_json = context;
    row.body = body;
    return parser.parse(row, rows);
  }
  // schemas/examples/<stem>.context.json + <stem>.body.json
  ParseResult fetched_example(std::string_view stem) {
    const std::string name(stem);
    return fetched(read_example(name + ".context.json"), read_example(name + ".body.json"));
  }
};

}  // namespace hh::events::test
