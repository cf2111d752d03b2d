#pragma once
// The limits that keep a hostile or broken body from costing unbounded memory or stack.
// One struct, named fields, defaults that every real payload of the reference notes
// stays far below (style.md: limits are named constants in one config struct).
#include <cstddef>

namespace hh::events {

struct ParseLimits {
  // Largest body handed to simdjson. Webhook bodies are already capped at max_body_bytes
  // (4 MiB) by the listener, but fetched summary/timeseries pages can be tens of MB.
  // simdjson On-Demand needs about 5 bytes of index and string buffer per input byte, so
  // 64 MiB bounds one parser at roughly 350 MB. A larger body is `invalid`. Fetched
  // workout streams do not count: StreamPointReader needs no memory beyond the body.
  size_t max_document_bytes = size_t{64} << 20;
  // Longest single JSON string accepted anywhere (no real field comes near: the longest
  // are workout map polylines, tens of KB). Stops a 10 MB string from being copied
  // into a row.
  size_t max_string_bytes = size_t{1} << 20;
  // Deepest nesting accepted (root object = 1). Real payloads stay below 10; the cap
  // bounds the validator's recursion.
  size_t max_depth = 64;
  // After a document larger than this the parser's buffers are released before the next
  // (small) one, so one big fetched page does not pin hundreds of MB for good.
  size_t retained_bytes = size_t{8} << 20;
};

}  // namespace hh::events
