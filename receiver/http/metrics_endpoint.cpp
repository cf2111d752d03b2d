#include "receiver/http/metrics_endpoint.h"

#include "receiver/http/bearer_token.h"
#include "receiver/http/off_io.h"

namespace hh::http {

void MetricsEndpoint::add(Collector collector) { collectors_.push_back(std::move(collector)); }

std::string MetricsEndpoint::render() const {
  std::lock_guard lock(scrape_mutex_);
  PrometheusText out;
  for (const auto& collect : collectors_) collect(out);
  return out.take();
}

void MetricsEndpoint::install(Router& router, BlockingPool& pool, std::string token) {
  std::optional<BearerToken> required;
  if (!token.empty()) required.emplace(token);
  router.add(bhttp::verb::get, "/metrics",
             [this, &pool, required](Request& request) -> net::awaitable<Response> {
               if (required && !required->accepts(request[bhttp::field::authorization])) {
                 co_return bearer_refusal();
               }
               co_return text_response(Status::ok, co_await run_off_io(pool, [this] { return render(); }),
                                       kPrometheusContentType);
             });
}

}  // namespace hh::http
