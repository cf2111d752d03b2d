#pragma once
// Read-API pages of the forwarding outbox and the follow-up queue (the console's
// "Forwarding" and "Follow-ups"; what `healthhook forward` and `healthhook jobs` list):
//
//   GET /v1/forwarding
//       {"destinations":[{"destination":…,"pending":n,"dead":n,"dropped":n,"paused":bool,
//                         "oldest_pending_created_at_ms":…|null}…]}   every [[forward]] name
//   GET /v1/forwarding/{destination}/entries?state=pending|dead|dropped&seq=&limit=&cursor=
//       {"items":[entry…],"next_cursor":…}            in outbox id order; seq: one delivery's
//                                                      only; a destination no [[forward]]
//                                                      names: while the outbox holds it
//   GET /v1/jobs?state=queued|running|dead|done&limit=
//       {"items":[job…],"truncated":bool}             at most `limit` (default 1000)
//
// They read through the same store interfaces as those commands (store::Outbox,
// store::JobAdmin), each on a connection opened for the request: an operator's page, not a
// hot path.
#include <string>
#include <vector>

#include "api/api_pages.h"
#include "store/database_location.h"

namespace hh::api {

Page forwarding_page(const store::Database& database, const std::vector<std::string>& destinations,
                     const ApiTarget& target);
Page forwarding_entries_page(const store::Database& database, const std::vector<std::string>& destinations,
                             const std::string& destination, const ApiTarget& target);
Page jobs_page(const store::Database& database, const ApiTarget& target);

}  // namespace hh::api
