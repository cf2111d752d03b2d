#pragma once
// `healthhook user deregister`, after the service answered success: the deregistration is
// kept in the store as an inbox row (origin 'fetch', event_type "fetch.deregistration",
// the fetch context of events/delivery_parser.h; body: the service's answer), so that the
// processor marks the connection row (status 'deregistered', deregistered_at) and writes
// its change-feed row through the same latest-wins code as every other row, and so that
// `rebuild` makes the same mark again.
//
// When no other process applies the inbox, the row is applied here at once. Otherwise (a
// running `serve` or another instance on PostgreSQL) that process applies it: on
// PostgreSQL with its next step, on SQLite with the step after its next inbox commit.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "config/settings.h"

namespace hh::cli {

struct RecordedDeregistration {
  int64_t seq = 0;       // the inbox row
  bool applied = false;  // the connection row is marked already (else the running server marks it)
  // Why it was not applied here when no other process holds the inbox (empty: one does);
  // the row is stored, and the next process to apply the inbox marks the connection.
  std::string not_applied_because;
};

// `url` is the request that deregistered (kept in the context, never the key); `at_ms` when
// the service answered.
Result<RecordedDeregistration> record_deregistration(const config::Settings& settings, std::string_view user_id,
                                                     std::string_view provider, std::string_view url, int64_t at_ms);

}  // namespace hh::cli
