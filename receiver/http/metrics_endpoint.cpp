#include "receiver/http/metrics_endpoint.h"

namespace hh::http {

void MetricsEndpoint::add(Collector collector) { collectors_.push_back(std::move(collector)); }

std::string MetricsEndpoint::render() const {
  std::lock_guard lock(scrape_mutex_);
  PrometheusText out;
  for (const auto& collect : collectors_) collect(out);
  return out.take();
}

void MetricsEndpoint::install(Router& router) {
  router.add(bhttp::verb::get, "/metrics", [this](Request&) -> net::awaitable<Response> {
    co_return text_response(Status::ok, render(), kPrometheusContentType);
  });
}

}  // namespace hh::http
