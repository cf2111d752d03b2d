#pragma once
// GET /healthz: the process is alive (always 200 while it can answer).
// GET /readyz: 200 when the store is open and writable (last commit succeeded, disk not
// nearly full), the inbox queue is below its high-water mark and nothing else the server
// knows of stands in the way (`also`: e.g. derived tables an interrupted rebuild left
// incomplete); else 503 with the reason.
#include <functional>
#include <string>

#include "receiver/http/router.h"
#include "store/inbox_writer.h"

namespace hh::http {

// Why else the server is not ready ("" when it is). Asked on the io thread at every
// request: it must be cheap and do no database work (read what another thread keeps).
using ReadinessCheck = std::function<std::string()>;

void add_health_endpoints(Router& router, const store::InboxWriter& writer, ReadinessCheck also = {});

}  // namespace hh::http
