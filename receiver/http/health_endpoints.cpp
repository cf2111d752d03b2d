#include "receiver/http/health_endpoints.h"

#include "common/json_writer.h"

namespace hh::http {

void add_health_endpoints(Router& router, const store::InboxWriter& writer, ReadinessCheck also) {
  router.add(bhttp::verb::get, "/healthz", [](Request&) -> net::awaitable<Response> {
    co_return json_response(Status::ok, R"({"status":"alive"})");
  });
  router.add(bhttp::verb::get, "/readyz", [&writer, also = std::move(also)](Request&) -> net::awaitable<Response> {
    std::string problem;  // built only when not ready
    if (const std::string sync_failure = writer.wal_sync_failure(); !sync_failure.empty()) {
      // For good: every delivery gets 503 until a restart (InboxWriter::wal_sync_failure() says why).
      problem = "inbox WAL sync failed (" + sync_failure + "); restart healthhook";
    } else if (!writer.last_commit_ok()) {
      problem = "last inbox commit failed";
    } else if (const auto stalled = writer.commit_stalled()) {
      // The database stopped answering (a frozen or unreachable PostgreSQL, a stuck disk):
      // the deliveries waiting on this commit get 503s at their deadline, so not ready.
      problem = "inbox commit running for " + std::to_string(stalled->count() / 1000) +
                " s (the database does not answer)";
    } else if (writer.disk_low()) {
      problem = "disk nearly full";
    } else if (!writer.accepting()) {
      problem = "inbox queue above its high-water mark";
    } else if (also) {
      problem = also();
    }
    std::string body;
    json::ObjectWriter object(body);
    object.string("status", problem.empty() ? "ready" : "not ready");
    if (!problem.empty()) object.string("reason", problem);
    object.integer("queue_depth", static_cast<int64_t>(writer.queue_depth()));
    object.close();
    co_return json_response(problem.empty() ? Status::ok : Status::service_unavailable, std::move(body));
  });
}

}  // namespace hh::http
