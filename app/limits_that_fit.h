#pragma once
// Settings lowered at start to what this machine and this store allow (spec §2: a warning,
// never a refusal to start).
#include <cstddef>
#include <cstdint>

#include "config/settings.h"
#include "store/inbox.h"

namespace hh::app {

// max_connections lowered to what the file-descriptor limit allows; the soft limit is
// raised to the hard one first.
size_t connections_that_fit(int64_t configured);

// max_body_bytes lowered to what one inbox row can hold (with the request's headers).
uint64_t body_limit_that_fits(const config::Settings& settings, const store::Inbox& inbox);

}  // namespace hh::app
