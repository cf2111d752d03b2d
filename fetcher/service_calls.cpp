#include "fetcher/service_calls.h"

#include <simdjson.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>

#include "fetcher/base_url.h"
#include "fetcher/fetcher.h"
#include "fetcher/https_client.h"
#include "fetcher/service_values.h"

namespace hh::fetcher {
namespace {

namespace net = boost::asio;

// Beyond the refresh's own timeout: the service's time to answer once it stopped waiting
// for the sources.
constexpr std::chrono::seconds kRefreshAnswerGrace{15};

std::string_view method_name(Method method) {
  switch (method) {
    case Method::get: return "GET";
    case Method::post: return "POST";
    case Method::delete_: return "DELETE";
  }
  return "?";
}

// A body excerpt on one line, for an error message.
std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text) out.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
  return out;
}

// One request; the 2xx body, or an error naming the request.
Result<std::string> call(const ServiceAccess& access, Method method, const std::vector<std::string_view>& segments,
                         const std::vector<std::pair<std::string_view, std::string_view>>& query,
                         std::optional<std::chrono::milliseconds> read_timeout) {
  auto base = BaseUrl::parse(access.service.base_url);
  if (!base) return fail(ErrorKind::data, "service.base_url: " + base.error());
  auto path = build_path(*base, segments);
  if (!path) return fail(ErrorKind::data, path.error());
  const std::string target = query.empty() ? std::move(*path) : with_query(std::move(*path), query);
  const std::string request = std::string(method_name(method)) + " " + base->full_url(target);

  FetcherOptions options;  // only for the client settings derived from [service]
  options.service = access.service;
  options.api_key = access.api_key;
  options.base_dir = access.base_dir;
  ClientOptions client_settings = client_options(options);
  if (read_timeout) client_settings.read_timeout = std::max(client_settings.read_timeout, *read_timeout);
  net::io_context io;
  auto client = HttpsClient::create(io.get_executor(), *base, std::move(client_settings));
  if (!client) return fail(ErrorKind::data, "service: " + client.error());
  std::optional<FetchResult> result;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        result = co_await (*client)->send(method, target);
        (*client)->close_all();  // no idle connection left to keep io.run() going
      },
      net::detached);
  io.run();

  if (!result) return fail(ErrorKind::io, request + ": no result");
  if (result->failure != FetchFailure::none) {
    return fail(ErrorKind::io, request + ": " + std::string(failure_name(result->failure)) + ": " + result->error);
  }
  if (result->status == 401 || result->status == 403) {
    return fail(request + ": HTTP " + std::to_string(result->status) + ": the service refused the API key");
  }
  if (result->status / 100 != 2) {
    return fail(request + ": HTTP " + std::to_string(result->status) +
                (result->body.empty() ? "" : ": " + one_line(result->body)));
  }
  return std::move(result->body);
}

Result<void> read_strings(simdjson::dom::object object, const char* key, std::vector<std::string>& out) {
  simdjson::dom::array items;
  if (object[key].get_array().get(items)) return fail(std::string(key) + ": missing or not an array");
  for (auto item : items) {
    std::string_view text;
    if (item.get_string().get(text)) return fail(std::string(key) + ": an item is not a string");
    out.emplace_back(text);
  }
  return {};
}

// The interface's Refresh result: all five fields are required.
Result<RefreshResult> read_refresh_result(const std::string& body) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(body);
  simdjson::dom::object object;
  if (parser.parse(padded).get_object().get(object)) return fail("not a JSON object");
  RefreshResult result;
  if (object["success"].get_bool().get(result.success)) return fail("success: missing or not a boolean");
  std::string_view user_id;
  if (object["user_id"].get_string().get(user_id)) return fail("user_id: missing or not a string");
  result.user_id = std::string(user_id);
  for (auto [key, list] : {std::pair{"refreshed_sources", &result.refreshed_sources},
                           std::pair{"in_progress_sources", &result.in_progress_sources},
                           std::pair{"failed_sources", &result.failed_sources}}) {
    if (auto read = read_strings(object, key, *list); !read) return fail(read.error());
  }
  return result;
}

Result<void> check_user_id(std::string_view user_id) {
  if (!is_uuid(user_id)) return fail(ErrorKind::data, "user id \"" + one_line(user_id) + "\" is not a UUID");
  return {};
}

}  // namespace

Result<RefreshResult> refresh_user(const ServiceAccess& access, std::string_view user_id, int64_t timeout_s) {
  if (auto checked = check_user_id(user_id); !checked) return fail(ErrorKind::data, checked.error());
  if (timeout_s < kRefreshTimeoutMinS || timeout_s > kRefreshTimeoutMaxS) {
    return fail(ErrorKind::data, "timeout " + std::to_string(timeout_s) + " is not between " +
                                     std::to_string(kRefreshTimeoutMinS) + " and " +
                                     std::to_string(kRefreshTimeoutMaxS) + " seconds");
  }
  const std::string timeout = std::to_string(timeout_s);
  auto body = call(access, Method::post, {"v2", "user", "refresh", user_id}, {{"timeout", timeout}},
                   std::chrono::seconds(timeout_s) + kRefreshAnswerGrace);
  if (!body) return fail(body.error_kind(), body.error());
  auto result = read_refresh_result(*body);
  if (!result) return fail("POST /v2/user/refresh: unexpected answer: " + result.error());
  return result;
}

Result<bool> deregister_user(const ServiceAccess& access, std::string_view user_id, std::string_view provider) {
  if (auto checked = check_user_id(user_id); !checked) return fail(ErrorKind::data, checked.error());
  if (provider.empty()) return fail(ErrorKind::data, "provider is empty");
  auto body = call(access, Method::delete_, {"v2", "user", user_id, provider}, {}, std::nullopt);
  if (!body) return fail(body.error_kind(), body.error());
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(*body);
  simdjson::dom::object object;
  bool success = false;
  if (parser.parse(padded).get_object().get(object) || object["success"].get_bool().get(success)) {
    return fail("DELETE /v2/user: unexpected answer: success: missing or not a boolean");
  }
  return success;
}

}  // namespace hh::fetcher
