#include "receiver/http/http_types.h"

#include "common/json_writer.h"

namespace hh::http {

net::awaitable<void> wait_for(std::chrono::milliseconds delay) {
  if (delay.count() <= 0) co_return;
  net::steady_timer timer(co_await net::this_coro::executor, delay);
  co_await timer.async_wait(use_tuple);
}

Response text_response(Status status, std::string body, std::string_view content_type) {
  Response response{status, 11};
  response.set(bhttp::field::server, "healthhook");
  response.set(bhttp::field::content_type, content_type);
  response.body() = std::move(body);
  response.prepare_payload();
  return response;
}

Response json_response(Status status, std::string body) {
  body.push_back('\n');
  return text_response(status, std::move(body), "application/json");
}

Response error_response(Status status, std::string_view message) {
  std::string body;
  json::ObjectWriter(body).string("error", message).close();
  return json_response(status, std::move(body));
}

Response without_body(Response response) {
  if (response.body().empty() && response.has_content_length()) return response;  // already one
  const auto status = response.result();
  if (status != Status::not_modified && status != Status::no_content) {
    response.content_length(response.body().size());
  }
  std::string().swap(response.body());
  return response;
}

}  // namespace hh::http
