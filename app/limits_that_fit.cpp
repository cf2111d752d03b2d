#include "app/limits_that_fit.h"

#include <string>

#include "common/log.h"
#include "forward/forwarder.h"
#include "receiver/http/fd_limit.h"

namespace hh::app {

uint64_t outgoing_sockets(const config::Settings& settings) {
  const bool fetching = !settings.service.api_key_file.empty();
  return forward::Forwarder::sockets_at_most(settings) +
         (fetching ? static_cast<uint64_t>(settings.service.concurrency) : 0);
}

ConnectionsFit fit_connections(int64_t configured, uint64_t outgoing) {
  const http::DescriptorLimit limit = http::raise_descriptor_limit();
  const uint64_t fit = http::connections_that_fit(limit, outgoing);
  ConnectionsFit out{.max_connections = static_cast<size_t>(configured),
                     .configured = configured,
                     .nofile_limit = limit.soft,
                     .outgoing = outgoing,
                     .nofile_error = limit.error,
                     .reason = {}};
  if (static_cast<uint64_t>(configured) <= fit) return out;
  out.max_connections = static_cast<size_t>(fit);
  // Below a handful the service is as good as down (at 20 descriptors not one accept
  // succeeds): said so, not left to a count of accept failures.
  constexpr uint64_t kFewConnections = 8;
  out.reason = fit < kFewConnections
                   ? "the file-descriptor limit leaves (almost) no connections beside the " +
                         std::to_string(http::kReservedDescriptors) +
                         " descriptors serve keeps for its files and threads and the outgoing_sockets: "
                         "it may accept none; raise "
                         "LimitNOFILE (ulimit -n) to 1024 or more"
                   : std::string("the file-descriptor limit is too low; raise LimitNOFILE (ulimit -n)");
  return out;
}

size_t connections_that_fit(int64_t configured, uint64_t outgoing) {
  const ConnectionsFit fit = fit_connections(configured, outgoing);
  if (!fit.nofile_error.empty()) log::warn("nofile_limit").str("error", fit.nofile_error);
  if (fit.reason.empty()) return fit.max_connections;
  log::warn("max_connections_lowered")
      .num("configured", fit.configured)
      .num("max_connections", static_cast<int64_t>(fit.max_connections))
      .num("nofile_limit", static_cast<int64_t>(fit.nofile_limit))
      .num("outgoing_sockets", static_cast<int64_t>(fit.outgoing))
      .str("reason", fit.reason);
  return fit.max_connections;
}

BodyLimitFit fit_body_limit(const config::Settings& settings, uint64_t row_bytes) {
  const uint64_t configured = static_cast<uint64_t>(settings.max_body_bytes);
  const uint64_t headers = static_cast<uint64_t>(settings.max_header_bytes);
  BodyLimitFit out{.max_body_bytes = configured, .configured = configured, .row_bytes = row_bytes, .reason = {}};
  if (configured + headers <= row_bytes) return out;
  out.max_body_bytes = row_bytes > headers ? row_bytes - headers : 0;
  out.reason = "larger than the store can hold in one row";
  return out;
}

uint64_t body_limit_that_fits(const config::Settings& settings, const store::Inbox& inbox) {
  const BodyLimitFit fit = fit_body_limit(settings, inbox.max_delivery_bytes());
  if (fit.reason.empty()) return fit.max_body_bytes;
  log::warn("max_body_bytes_lowered")
      .num("configured", static_cast<int64_t>(fit.configured))
      .num("max_body_bytes", static_cast<int64_t>(fit.max_body_bytes))
      .str("reason", fit.reason);
  return fit.max_body_bytes;
}

InflightBudgetFit fit_inflight_budget(const config::Settings& settings, uint64_t max_body_bytes) {
  const uint64_t configured = static_cast<uint64_t>(settings.max_inflight_body_mib) * 1024 * 1024;
  InflightBudgetFit out{.budget_bytes = configured, .configured_mib = settings.max_inflight_body_mib, .reason = {}};
  if (max_body_bytes <= configured) return out;
  out.budget_bytes = max_body_bytes;
  out.reason = "smaller than max_body_bytes: a body the limit allows must fit the budget whole";
  return out;
}

uint64_t inflight_budget_that_fits(const config::Settings& settings, uint64_t max_body_bytes) {
  const InflightBudgetFit fit = fit_inflight_budget(settings, max_body_bytes);
  if (fit.reason.empty()) return fit.budget_bytes;
  log::warn("max_inflight_body_raised")
      .num("configured_mib", fit.configured_mib)
      .num("budget_bytes", static_cast<int64_t>(fit.budget_bytes))
      .str("reason", fit.reason);
  return fit.budget_bytes;
}

}  // namespace hh::app
