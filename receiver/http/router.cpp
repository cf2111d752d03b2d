#include "receiver/http/router.h"

namespace hh::http {

void Router::add(bhttp::verb method, std::string path, Endpoint endpoint, HeadCheck check) {
  routes_.push_back({method, std::move(path), false, std::move(endpoint), std::move(check)});
}

void Router::add_prefix(bhttp::verb method, std::string prefix, Endpoint endpoint, HeadCheck check) {
  routes_.push_back({method, std::move(prefix), true, std::move(endpoint), std::move(check)});
}

void Router::decorate_prefix(std::string prefix, std::function<void(Response&)> decorate) {
  decorators_.emplace_back(std::move(prefix), std::move(decorate));
}

Response Router::decorated(std::string_view path, Response response) const {
  for (const auto& [prefix, decorate] : decorators_) {
    if (path.starts_with(prefix)) decorate(response);
  }
  return response;
}

std::optional<Response> Router::check_head(const RequestHead& head) const {
  const Route* route = find(head.method(), path_of(head.target()), nullptr);
  if (!route || !route->check) return std::nullopt;
  return route->check(head);
}

bool Router::authenticates(bhttp::verb method, std::string_view target) const {
  const Route* route = find(method, path_of(target), nullptr);
  return route && route->check;
}

std::string_view Router::path_of(std::string_view target) { return target.substr(0, target.find('?')); }

const Router::Route* Router::find(bhttp::verb method, std::string_view path, std::string* allowed) const {
  for (const auto& route : routes_) {
    const bool path_matches = route.prefix ? path.starts_with(route.path) : path == route.path;
    if (!path_matches) continue;
    // HEAD is GET without the body (RFC 9110 §9.3.2): every GET route answers it.
    if (route.method == method || (method == bhttp::verb::head && route.method == bhttp::verb::get)) return &route;
    if (allowed) {
      if (!allowed->empty()) allowed->append(", ");
      allowed->append(std::string(bhttp::to_string(route.method)));
      if (route.method == bhttp::verb::get) allowed->append(", HEAD");
    }
  }
  return nullptr;
}

Router::Match Router::match(bhttp::verb method, std::string_view target) const {
  std::string allowed;
  if (find(method, path_of(target), &allowed)) return Match::found;
  return allowed.empty() ? Match::not_found : Match::wrong_method;
}

net::awaitable<Response> Router::handle(Request& request) const {
  const bool head = request.method() == bhttp::verb::head;
  Response response = co_await answer(request);
  co_return head ? without_body(std::move(response)) : std::move(response);
}

net::awaitable<Response> Router::answer(Request& request) const {
  std::string allowed;
  const std::string_view path = path_of(request.target());
  const Route* route = find(request.method(), path, &allowed);
  if (route) co_return co_await route->endpoint(request);
  if (allowed.empty()) co_return decorated(path, error_response(Status::not_found, "no such path"));
  Response response = error_response(Status::method_not_allowed, "method not allowed; allowed: " + allowed);
  response.set(bhttp::field::allow, allowed);
  co_return decorated(path, std::move(response));
}

}  // namespace hh::http
