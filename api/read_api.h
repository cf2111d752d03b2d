#pragma once
// The read API (spec §7): GET endpoints under /v1/ on the receiver's own listener, for a
// backend that would rather not open the SQLite file. Pages and their JSON: api_pages.h.
//
// Enabled only when read_api.token_file is configured (`serve` mounts it then; without
// it /v1/ answers 404 like any unknown path). Every request needs
// "Authorization: Bearer <token>" (bearer_token.h): without it, or with a wrong token,
// 401 with a JSON error and WWW-Authenticate. A reload (SIGHUP) replaces the token
// (replace_token). /healthz, /readyz and /metrics are
// separate routes and need no token.
//
// Queries run on readers of their own (reader_pool.h), never on the writer's connection,
// and read while the writer commits. They run on the blocking pool (off_io.h), never on
// a thread that answers webhooks; pages are capped (10,000 rows,
// and 8 MiB of JSON: api/page_support.h).
//
// Thread-safe; must outlive the router it is mounted on.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "receiver/http/bearer_token.h"
#include "receiver/http/off_io.h"
#include "api/reader_pool.h"
#include "receiver/http/router.h"

namespace hh::api {

class ReadApi {
 public:
  // Opens one reader of `database` (the `database = …` setting, with the reply timeout of
  // the listener's reads: store/database_location.h) to check that it can be read. `token`
  // must not be empty. A page the database cannot answer for now (unreachable, not
  // answering in time, busy) is 503 with Retry-After: `retry_after_s` (page_support.h).
  static Result<std::unique_ptr<ReadApi>> create(const store::Database& database, std::string_view token,
                                                 int64_t retry_after_s);

  // A reload's token (read_api.token_file as it reads now): from the return on, it is
  // accepted and the one before refused. Empty: every request is refused (401), the file
  // having been unset; /v1/ stays mounted until a restart. Returns whether it changed.
  bool replace_token(std::string_view token) { return token_.replace(token); }

  // The [[forward]] names, for GET /v1/forwarding (before the listener starts).
  void set_forward_destinations(std::vector<std::string> names) { destinations_ = std::move(names); }

  // While `reason()` says why (not ""), every page that reads the derived tables or the
  // deliveries' outcomes answers 503 with it as its error, and Retry-After (create()'s
  // `retry_after_s`): derived tables an unfinished rebuild left incomplete
  // (store/unfinished_rebuild.h) must not pass for whole ones, nor 'processed' for applied.
  // The forwarding and job pages (state of their own, which a rebuild keeps) still answer.
  // `reason` runs on the blocking pool at every request: cheap, thread-safe. Before the
  // listener starts.
  void refuse_while(std::function<std::string()> reason) { unavailable_reason_ = std::move(reason); }

  // Routes GET /v1/… to handle(); `pool` runs the queries and must outlive the router's use.
  void mount(http::Router& router, http::BlockingPool& pool);

  http::net::awaitable<http::Response> handle(http::Request& request, http::BlockingPool& pool);

  // The same pages for a caller that has authenticated the request itself (the console,
  // by its session: console/console_routes.h): `target` is a read-API target ("/v1/…?…").
  http::net::awaitable<http::Response> handle_trusted(std::string target, http::BlockingPool& pool);

 private:
  ReadApi(store::Database database, std::string_view token, int64_t retry_after_s)
      : token_(token, http::WithoutToken::refuse), retry_after_s_(retry_after_s), database_(database), readers_(std::move(database)) {}
  http::Response answer(http::Request& request);
  // `console`: the caller is the console (handle_trusted), whose delivery page has its
  // signature values masked; the bearer-token API keeps them (a backend may re-verify).
  http::Response answer_target(std::string_view target, bool console);

  http::ReplaceableBearerToken token_;
  const int64_t retry_after_s_;
  const store::Database database_;         // for the outbox and job pages (outbox_pages.h)
  std::vector<std::string> destinations_;  // [[forward]] names
  std::function<std::string()> unavailable_reason_;  // refuse_while()
  ReaderPool readers_;
};

}  // namespace hh::api
