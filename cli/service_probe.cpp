#include "cli/service_probe.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <simdjson.h>

#include <optional>

#include "fetcher/base_url.h"
#include "fetcher/calls/service_request.h"
#include "fetcher/fetcher.h"
#include "fetcher/https_client.h"

namespace hh::cli {

namespace net = boost::asio;

ServiceProbe probe_service(const config::Settings& settings, const std::string& api_key) {
  ServiceProbe probe;
  auto base = fetcher::BaseUrl::parse(settings.service.base_url);
  if (!base) {
    probe.detail = "service.base_url: " + base.error();
    return probe;
  }
  auto path = fetcher::build_path(*base, {"v2", "providers"});
  if (!path) {
    probe.detail = "service.base_url: " + path.error();
    return probe;
  }
  probe.url = base->full_url(*path);

  fetcher::FetcherOptions options;  // only for the client settings derived from [service]
  options.service = settings.service;
  options.api_key = api_key;
  options.base_dir = settings.base_dir;
  net::io_context io;
  auto client = fetcher::HttpsClient::create(io.get_executor(), *base, fetcher::client_options(options));
  if (!client) {
    probe.detail = "service: " + client.error();
    return probe;
  }
  std::optional<fetcher::FetchResult> result;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        result = co_await (*client)->get(*path);
        (*client)->close_all();  // no idle connection left to keep io.run() going
      },
      net::detached);
  io.run();

  if (!result || result->failure != fetcher::FetchFailure::none) {
    probe.verdict = ServiceProbe::Verdict::unreachable;
    probe.detail = result ? std::string(fetcher::failure_name(result->failure)) + ": " + result->error
                          : std::string("no result");
    return probe;
  }
  probe.status = result->status;
  if (result->status / 100 == 2) {
    // A 2xx that is not the providers' array is not the service (a proxy's or a captive
    // portal's page): the base URL is wrong, as a follow-up would find out.
    simdjson::dom::parser parser;
    const simdjson::padded_string padded(result->body);
    simdjson::dom::array providers;
    if (parser.parse(padded).get_array().get(providers)) {
      probe.verdict = ServiceProbe::Verdict::unexpected_status;
      probe.detail = "HTTP " + std::to_string(result->status) + " with an answer that is not a JSON array of providers";
    } else {
      probe.verdict = ServiceProbe::Verdict::ok;
    }
  } else if (result->status == 401 || result->status == 403) {
    probe.verdict = ServiceProbe::Verdict::key_refused;
    probe.detail = "the service refused the API key (HTTP " + std::to_string(result->status) + ")";
  } else {
    probe.verdict = ServiceProbe::Verdict::unexpected_status;
    probe.detail = "HTTP " + std::to_string(result->status) + fetcher::status_hint(result->status, "the base URL");
  }
  return probe;
}

}  // namespace hh::cli
