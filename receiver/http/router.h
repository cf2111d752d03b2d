#pragma once
// Maps (method, path) to an endpoint. Request handling is a coroutine from request to
// response: endpoints never see the socket, so tests can call them directly.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "receiver/http/http_types.h"

namespace hh::http {

using Endpoint = std::function<net::awaitable<Response>(Request&)>;
// Runs when a request's head is complete, before its body is read: a response refuses the
// request (its body is never read), nullopt lets it through. A route with a head check
// authenticates its requests (the webhook's signature): its check refuses, with 401, heads
// that cannot be authentic, and its endpoint answers 401 exactly to requests that are
// not. Only such a route takes a request body (session.h).
using RequestHead = bhttp::request_header<>;
using HeadCheck = std::function<std::optional<Response>(const RequestHead&)>;

class Router {
 public:
  // Exact path; `check` (optional) runs on the head first.
  void add(bhttp::verb method, std::string path, Endpoint endpoint, HeadCheck check = {});
  // Every path starting with `prefix` (e.g. "/v1/"); an exact route added before wins.
  void add_prefix(bhttp::verb method, std::string prefix, Endpoint endpoint, HeadCheck check = {});
  // Headers the router's own answers (404, 405) get for paths starting with `prefix`, as
  // the endpoints there give theirs (the console's security headers on every answer).
  void decorate_prefix(std::string prefix, std::function<void(Response&)> decorate);

  // What the router would do with a request line, known before the body is read: lets
  // the session refuse a wrong method/path or an oversized body without reading it.
  enum class Match { found, wrong_method, not_found };
  Match match(bhttp::verb method, std::string_view target) const;

  // The matching route's head check (nullopt without one, or when nothing matches).
  std::optional<Response> check_head(const RequestHead& head) const;
  // Whether the matching route authenticates its requests (has a head check).
  bool authenticates(bhttp::verb method, std::string_view target) const;

  // 404 / 405 (with Allow) when nothing matches. A HEAD is answered as its GET, without
  // the body.
  net::awaitable<Response> handle(Request& request) const;

  static std::string_view path_of(std::string_view target);  // target without ?query

 private:
  struct Route {
    bhttp::verb method;
    std::string path;
    bool prefix;
    Endpoint endpoint;
    HeadCheck check;
  };
  const Route* find(bhttp::verb method, std::string_view path, std::string* allowed) const;
  net::awaitable<Response> answer(Request& request) const;
  Response decorated(std::string_view path, Response response) const;
  std::vector<Route> routes_;
  std::vector<std::pair<std::string, std::function<void(Response&)>>> decorators_;
};

}  // namespace hh::http
