#pragma once
// GET /metrics: the Prometheus text format (prometheus_text.h), pull model. Nothing is
// computed between scrapes: at scrape time each registered collector reads the counters
// its component keeps anyway (atomics, histograms) or runs a few cheap queries, and
// writes its families.
//
// Plugging a component in is one add() at wiring time (cli/serve_command.cpp):
//
//   metrics.add([&processor](metrics::PrometheusText& out) {
//     out.counter("healthhook_processor_steps_total", "Committed processor steps",
//                 processor->stats().steps.load());
//   });
//
// Collectors run in the order added, on a thread of the blocking pool (off_io.h: never on
// a thread that answers webhooks; some collectors read the database), one scrape at a
// time; each must write family names no other collector writes. Everything captured by
// reference must outlive the endpoint's router.
//
// With a token (`[metrics] token_file`), a scrape needs "Authorization: Bearer <token>";
// a reload (SIGHUP) replaces it, sets it or withdraws it (replace_token).
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "receiver/http/bearer_token.h"
#include "receiver/http/off_io.h"
#include "metrics/prometheus_text.h"
#include "receiver/http/router.h"

namespace hh::metrics {

class MetricsEndpoint {
 public:
  using Collector = std::function<void(PrometheusText&)>;

  // Before the listener starts (not synchronised with scrapes).
  void add(Collector collector);
  // Registers GET /metrics on `router`; `this` and `pool` must outlive the router's use.
  // `token` empty: no token needed.
  void install(http::Router& router, http::BlockingPool& pool, std::string_view token = {});
  // A reload's token: from the return on, scrapes need it (none when empty). Returns
  // whether it changed.
  bool replace_token(std::string_view token) { return token_.replace(token); }

  // One exposition with every collector's families (also what tests call directly).
  std::string render() const;

 private:
  std::vector<Collector> collectors_;
  http::ReplaceableBearerToken token_{"", http::WithoutToken::admit};
  mutable std::mutex scrape_mutex_;  // one scrape at a time: collectors need not be reentrant
};

}  // namespace hh::metrics
