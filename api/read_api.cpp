#include "api/read_api.h"

#include "api/api_pages.h"
#include "api/console_pages.h"
#include "api/outbox_pages.h"
#include "api/page_support.h"
#include "receiver/http/off_io.h"

namespace hh::api {
namespace {

using http::Status;

// A 503 (the database cannot answer for now: page_support.h) says when to try again, as the
// webhook path's do.
http::Response response_of(Page page, int64_t retry_after_s) {
  const bool retry_later = page.status == Status::service_unavailable;
  http::Response response = http::json_response(page.status, std::move(page.body));
  response.set(http::bhttp::field::cache_control, "no-store");
  if (retry_later) response.set(http::bhttp::field::retry_after, std::to_string(retry_after_s));
  return response;
}

}  // namespace

Result<std::unique_ptr<ReadApi>> ReadApi::create(const store::Database& database, std::string_view token,
                                                 int64_t retry_after_s) {
  if (token.empty()) return fail("read API token is empty");
  std::unique_ptr<ReadApi> api(new ReadApi(database, token, retry_after_s));
  if (auto warmed = api->readers_.warm_up(); !warmed) return fail(warmed, "read API");
  return api;
}

void ReadApi::mount(http::Router& router, http::BlockingPool& pool) {
  router.add_prefix(http::bhttp::verb::get, "/v1/", [this, &pool](http::Request& request) {
    return handle(request, pool);
  });
}

http::net::awaitable<http::Response> ReadApi::handle(http::Request& request, http::BlockingPool& pool) {
  co_return co_await http::run_off_io(pool, [this, &request] { return answer(request); });
}

http::net::awaitable<http::Response> ReadApi::handle_trusted(std::string target, http::BlockingPool& pool) {
  co_return co_await http::run_off_io(pool, [this, &target] { return answer_target(target, true); });
}

http::Response ReadApi::answer(http::Request& request) {
  if (!token_.accepts(request)) return http::bearer_refusal();
  return answer_target(request.target(), false);
}

http::Response ReadApi::answer_target(std::string_view request_target, bool console) {
  auto target = parse_target(request_target);
  if (!target) return http::error_response(Status::bad_request, target.error());
  const auto& s = target->segments;
  const auto page_response = [this](Page page) { return response_of(std::move(page), retry_after_s_); };
  // The outbox and the follow-up queue: read through their own store handles.
  if (s.size() == 2 && s[0] == "v1" && s[1] == "forwarding") {
    return page_response(forwarding_page(database_, destinations_, *target));
  }
  if (s.size() == 4 && s[0] == "v1" && s[1] == "forwarding" && s[3] == "entries") {
    return page_response(forwarding_entries_page(database_, destinations_, s[2], *target));
  }
  if (s.size() == 2 && s[0] == "v1" && s[1] == "jobs") return page_response(jobs_page(database_, *target));
  if (unavailable_reason_) {
    if (const std::string reason = unavailable_reason_(); !reason.empty()) {
      http::Response response = http::error_response(Status::service_unavailable, reason);
      response.set(http::bhttp::field::retry_after, std::to_string(retry_after_s_));
      response.set(http::bhttp::field::cache_control, "no-store");
      return response;
    }
  }

  auto lease = readers_.acquire();
  if (!lease) return page_response(database_error(lease));
  Reader& reader = **lease;
  if (s.size() == 5 && s[0] == "v1" && s[1] == "users" && s[3] == "timeseries") {
    return page_response(timeseries_page(reader, s[2], s[4], *target));
  }
  if (s.size() == 5 && s[0] == "v1" && s[1] == "users" && s[3] == "summaries") {
    return page_response(summaries_page(reader, s[2], s[4], *target));
  }
  if (s.size() == 4 && s[0] == "v1" && s[1] == "workouts" && s[3] == "stream") {
    return page_response(stream_page(reader, s[2], *target));
  }
  if (s.size() == 2 && s[0] == "v1" && s[1] == "changes") return page_response(changes_page(reader, *target));
  if (s.size() == 2 && s[0] == "v1" && s[1] == "erasures") return page_response(erasures_page(reader, *target));
  if (s.size() == 3 && s[0] == "v1" && s[1] == "users") return page_response(user_page(reader, s[2], *target));
  if (s.size() == 4 && s[0] == "v1" && s[1] == "users" && s[3] == "orders") {
    return page_response(user_orders_page(reader, s[2], *target));
  }
  if (s.size() == 3 && s[0] == "v1" && s[1] == "deliveries") {
    return page_response(delivery_page(reader, s[2], *target, console));
  }
  if (s.size() == 2 && s[0] == "v1" && s[1] == "deliveries") return page_response(delivery_search_page(reader, *target));
  if (s.size() == 4 && s[0] == "v1" && s[1] == "deliveries" && s[3] == "changes") {
    return page_response(delivery_changes_page(reader, s[2], *target));
  }
  if (s.size() == 2 && s[0] == "v1" && s[1] == "users") return page_response(user_search_page(reader, *target));
  if (s.size() == 4 && s[0] == "v1" && s[1] == "users" && s[3] == "series") {
    return page_response(user_series_page(reader, s[2], *target));
  }
  if (s.size() == 4 && s[0] == "v1" && s[1] == "users" && s[3] == "backfills") {
    return page_response(user_backfills_page(reader, s[2], *target));
  }
  if (s.size() == 6 && s[0] == "v1" && s[1] == "users" && s[3] == "timeseries" && s[5] == "chart") {
    return page_response(chart_page(reader, s[2], s[4], *target));
  }
  return http::error_response(Status::not_found, "no such path");
}

}  // namespace hh::api
