#pragma once
// GET /healthz: the process is alive (always 200 while it can answer).
// GET /readyz: 200 when the store is open and writable (last commit succeeded, disk not
// nearly full) and the inbox queue is below its high-water mark; else 503 with the reason.
#include "receiver/http/router.h"
#include "store/inbox_writer.h"

namespace hh::http {

void add_health_endpoints(Router& router, const store::InboxWriter& writer);

}  // namespace hh::http
