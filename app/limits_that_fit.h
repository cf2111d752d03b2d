#pragma once
// Settings fitted at start to what this machine and this store allow, and to each other
// (spec §2: a warning, never a refusal to start).
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/settings.h"
#include "store/inbox.h"

namespace hh::app {

// Sockets serve opens itself at most: each [[forward]] destination's
// (forward::Forwarder::sockets_at_most) and, with follow-ups on, the fetcher's
// `service.concurrency`.
uint64_t outgoing_sockets(const config::Settings& settings);

// max_connections lowered to what the file-descriptor limit allows beside the reserve and
// `outgoing` sockets: a slow backend's POSTs took the descriptors the accept loop needed,
// and ingest stopped (black-box pass, stop 82). The soft limit is raised to the hard one
// first. Computed, not logged: serve logs it (connections_that_fit), check-config prints
// it, from this one function.
struct ConnectionsFit {
  size_t max_connections = 0;  // the value in force
  int64_t configured = 0;
  uint64_t nofile_limit = 0;   // the soft limit after raising it
  uint64_t outgoing = 0;
  std::string nofile_error;    // why the limit could not be read or raised ("" when fine)
  std::string reason;          // why max_connections was lowered ("" when it fits)
};
ConnectionsFit fit_connections(int64_t configured, uint64_t outgoing);

// serve: fit_connections()'s value, its warnings logged (nofile_limit,
// max_connections_lowered).
size_t connections_that_fit(int64_t configured, uint64_t outgoing);

// max_body_bytes lowered to what one inbox row can hold (`row_bytes`, the store's
// max_delivery_bytes) with the request's headers (max_header_bytes). Computed, not logged:
// serve logs it (body_limit_that_fits), check-config prints it.
struct BodyLimitFit {
  uint64_t max_body_bytes = 0;  // the value in force
  uint64_t configured = 0;
  uint64_t row_bytes = 0;
  std::string reason;  // why it was lowered ("" when it fits)
};
BodyLimitFit fit_body_limit(const config::Settings& settings, uint64_t row_bytes);

// serve: fit_body_limit()'s value for the open inbox, its warning logged
// (max_body_bytes_lowered).
uint64_t body_limit_that_fits(const config::Settings& settings, const store::Inbox& inbox);

// max_inflight_body_mib in bytes, raised to `max_body_bytes` (the limit in force:
// fit_body_limit) when it is smaller: a body the limit allows must fit the budget whole, or
// it would be answered 503 at every retry and never stored. Computed, not logged.
struct InflightBudgetFit {
  uint64_t budget_bytes = 0;  // the budget in force
  int64_t configured_mib = 0;
  std::string reason;  // why it was raised ("" when it fits)
};
InflightBudgetFit fit_inflight_budget(const config::Settings& settings, uint64_t max_body_bytes);

// serve: fit_inflight_budget()'s value, its warning logged (max_inflight_body_raised).
uint64_t inflight_budget_that_fits(const config::Settings& settings, uint64_t max_body_bytes);

}  // namespace hh::app
