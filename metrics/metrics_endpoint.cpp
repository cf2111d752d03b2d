#include "metrics/metrics_endpoint.h"

#include "receiver/http/bearer_token.h"
#include "receiver/http/off_io.h"

namespace hh::metrics {

void MetricsEndpoint::add(Collector collector) { collectors_.push_back(std::move(collector)); }

std::string MetricsEndpoint::render() const {
  std::lock_guard lock(scrape_mutex_);
  PrometheusText out;
  for (const auto& collect : collectors_) collect(out);
  return out.take();
}

void MetricsEndpoint::install(http::Router& router, http::BlockingPool& pool, std::string_view token) {
  token_.replace(token);
  router.add(http::bhttp::verb::get, "/metrics",
             [this, &pool](http::Request& request) -> http::net::awaitable<http::Response> {
               if (!token_.accepts(request)) {
                 co_return http::bearer_refusal();
               }
               co_return http::text_response(http::Status::ok, co_await http::run_off_io(pool, [this] { return render(); }),
                                       kPrometheusContentType);
             });
}

}  // namespace hh::metrics
