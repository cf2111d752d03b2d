#include "console/console_routes.h"

#include <algorithm>
#include <charconv>

#include "common/json_writer.h"
#include "common/log.h"
#include "console/embedded_assets.h"

namespace hh::console {
namespace {

using http::bhttp::field;
using http::Status;

constexpr std::string_view kPrefix = "/console/";
constexpr std::string_view kAssetPrefix = "/console/assets/";
constexpr std::string_view kReadApiPrefix = "/console/v1/";
// The read API by a target in the query (GET /console/api/read?target=/v1/…): for an id
// that is "." or "..", which a browser's URL parser takes for a path step wherever it is
// put in a path (%2E and %2E%2E too), so no /console/v1/… path can name it.
constexpr std::string_view kReadByQuery = "/console/api/read";
constexpr std::string_view kActionPrefix = "/console/api/actions/";
constexpr std::string_view kActions[] = {"forward-requeue", "forward-pause", "forward-resume",
                                         "jobs-requeue-dead", "backfill", "refresh"};
// The files the sign-in page needs; everything else is served to a session only.
constexpr std::string_view kPublicAssets[] = {"console.css", "sign-in.js", "favicon.svg"};

// Tags for `connect-src` etc. are all 'self': the page loads nothing from elsewhere, and
// a script injected into a page could not send what it read anywhere else either.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

http::Response console_error(Status status, std::string_view message) {
  http::Response response = http::error_response(status, message);
  response.set(field::cache_control, "no-store");
  return response;
}

std::string_view header_value(const http::RequestHead& head, std::string_view name) {
  const auto it = head.find(name);
  return it == head.end() ? std::string_view() : std::string_view(it->value());
}

// The paths only a POST is for: the sign-in, the sign-out and every action (one that does
// not exist too: its POST is a 404 after the same checks).
bool takes_post_only(std::string_view path) {
  return path == "/console/sign-in" || path == "/console/sign-out" || path.starts_with(kActionPrefix);
}

constexpr std::string_view kPostOnly = "POST";

http::Response post_only_refusal() {
  http::Response response = console_error(Status::method_not_allowed, "method not allowed; allowed: POST");
  response.set(field::allow, kPostOnly);
  return response;
}

// The router's 405 lists the method of every route whose path matches, and the GET prefix
// that serves the console matches every path under it: on a POST-only path it said
// "POST, GET, HEAD" though a GET there is refused too. A 405 that lists POST is on such a
// path (no console path takes both), so it says POST alone.
void allow_post_only(http::Response& response) {
  if (response.result() != Status::method_not_allowed) return;
  const auto allow = response.find(field::allow);
  if (allow == response.end() || std::string_view(allow->value()).find(kPostOnly) == std::string_view::npos) return;
  response = post_only_refusal();
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte; nullopt when malformed.
std::optional<std::string> form_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = hex_digit(text[i + 1]), lo = hex_digit(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// The fields of a form body. A field given twice is refused, not taken last-wins: the
// page sends each once, and `job_id=1&job_id=` would otherwise act on every dead job (the
// read API refuses a repeated parameter likewise).
Result<std::map<std::string, std::string, std::less<>>> parse_form(std::string_view body) {
  std::map<std::string, std::string, std::less<>> fields;
  while (!body.empty()) {
    const size_t end = std::min(body.find('&'), body.size());
    const std::string_view pair = body.substr(0, end);
    body.remove_prefix(std::min(end + 1, body.size()));
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto name = form_decode(pair.substr(0, eq));
    auto value = form_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!name || !value) return fail(ErrorKind::data, "the body is not a form");
    if (!fields.try_emplace(std::move(*name), std::move(*value)).second) {
      return fail(ErrorKind::data, "a field is given twice (each is sent once)");
    }
  }
  return fields;
}

// The read-API target of GET /console/api/read?target=…: its only parameter, a path under
// /v1/ (with its own query); nullopt when the request is not that.
std::optional<std::string> read_target_of(std::string_view request_target) {
  const size_t query = request_target.find('?');
  if (query == std::string_view::npos) return std::nullopt;
  auto fields = parse_form(request_target.substr(query + 1));
  if (!fields || fields->size() != 1) return std::nullopt;
  const auto target = fields->find("target");
  if (target == fields->end() || !target->second.starts_with("/v1/")) return std::nullopt;
  return target->second;
}

std::string session_json(const SessionView& session) {
  std::string body;
  json::ObjectWriter(body)
      .string("role", role_name(session.role))
      .string("csrf_token", session.csrf_token)
      .integer("expires_at_ms", session.expires_at_ms)
      .close();
  return body;
}

}  // namespace

void add_security_headers(http::Response& response) {
  response.set("Content-Security-Policy", kContentSecurityPolicy);
  response.set("X-Content-Type-Options", "nosniff");
  response.set("Referrer-Policy", "no-referrer");
  response.set("Cross-Origin-Opener-Policy", "same-origin");
  response.set("Cross-Origin-Resource-Policy", "same-origin");
  response.set("X-Frame-Options", "DENY");
}

Console::Console(ConsoleOptions options, api::ReadApi& read_api, http::BlockingPool& pool, OverviewHistory& overview,
                 ConsoleActions* actions, Sessions::Clock now_ms)
    : options_(std::move(options)),
      sessions_(options_.read_token, options_.admin_token, options_.policy, std::move(now_ms)),
      read_api_(read_api),
      pool_(pool),
      overview_(overview),
      actions_(actions) {
  // No copy left behind that a reload would not replace.
  options_.read_token.clear();
  options_.admin_token.clear();
}

void Console::mount(http::Router& router) {
  const auto with_headers = [](auto handler) {
    return [handler](http::Request& request) -> http::net::awaitable<http::Response> {
      http::Response response = co_await handler(request);
      add_security_headers(response);
      co_return response;
    };
  };
  router.decorate_prefix("/console", allow_post_only);       // first: it replaces the answer
  router.decorate_prefix("/console", add_security_headers);  // its 404s and 405s too
  router.add(http::bhttp::verb::get, "/console", [](http::Request&) -> http::net::awaitable<http::Response> {
    http::Response response = http::text_response(Status::permanent_redirect, "", "text/plain");
    response.set(field::location, kPrefix);
    add_security_headers(response);
    co_return response;
  });
  router.add(
      http::bhttp::verb::post, "/console/sign-in", with_headers([this](http::Request& r) { return sign_in(r); }),
      [this](const http::RequestHead& head) { return check_post(head, true); });
  router.add(
      http::bhttp::verb::post, "/console/sign-out", with_headers([this](http::Request& r) { return sign_out(r); }),
      [this](const http::RequestHead& head) { return check_post(head, false); });
  // Every action behind one route (a route each listed POST once per route in a 405's
  // Allow); action() answers 404 to a name that is none, after the same checks.
  router.add_prefix(
      http::bhttp::verb::post, std::string(kActionPrefix), with_headers([this](http::Request& r) { return action(r); }),
      [this](const http::RequestHead& head) { return check_post(head, false); });
  router.add_prefix(http::bhttp::verb::get, std::string(kPrefix), with_headers([this](http::Request& r) { return get(r); }));
}

std::optional<Console::Caller> Console::caller_of(const http::RequestHead& head) {
  const auto id = cookie_value(header_value(head, "cookie"), kSessionCookie);
  if (!id) return std::nullopt;
  auto session = sessions_.find(*id);
  if (!session) return std::nullopt;
  return Caller{std::string(*id), std::move(*session)};
}

// Before a POST's body is read: small, not chunked; the sign-in with X-Requested-With,
// anything else from a live session with its CSRF token (and an admin one for actions).
std::optional<http::Response> Console::check_post(const http::RequestHead& head, bool sign_in) {
  const auto respond = [](Status status, std::string_view message) {
    http::Response response = console_error(status, message);
    add_security_headers(response);
    return std::optional<http::Response>(std::move(response));
  };
  // What anyone can send is counted (the metrics and the periodic summary line), as every
  // route's refusals are; what a live session is refused is logged below, by session.
  const auto refuse_unauthenticated = [&](Status status, std::string_view message, http::Refusal reason) {
    if (options_.refusals) options_.refusals->count(reason);
    return respond(status, message);
  };
  const std::string_view length = header_value(head, "content-length");
  size_t bytes = 0;
  const auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), bytes);
  const bool too_large = !length.empty() && (ec != std::errc{} || end != length.data() + length.size() || bytes > kMaxFormBytes);
  // The size is checked here, before the body: a chunked one has none to check.
  if (!header_value(head, "transfer-encoding").empty()) {
    return refuse_unauthenticated(Status::length_required,
                                  "console requests need a Content-Length (small forms, at most 4 KiB)",
                                  http::Refusal::bad_request);
  }
  if (too_large) {
    return refuse_unauthenticated(Status::payload_too_large, "console requests are small forms (at most 4 KiB)",
                                  http::Refusal::request_too_large);
  }
  if (sign_in) {
    if (header_value(head, kRequestedWithHeader).empty()) {
      return refuse_unauthenticated(Status::forbidden, "sign-in needs the console's X-Requested-With header",
                                    http::Refusal::bad_request);
    }
    return std::nullopt;
  }
  auto caller = caller_of(head);
  if (!caller) return refuse_unauthenticated(Status::unauthorized, "not signed in", http::Refusal::unauthorized);
  const std::string_view path = http::Router::path_of(head.target());
  // A signed-in session's refused attempt is logged (as every action is): a page of
  // another site posting with its cookie, or a read-only operator trying an action.
  const auto refused = [&](std::string_view reason) {
    log::warn("console_action_refused")
        .str("token", role_name(caller->session.role))
        .str("session", caller->session.tag)
        .str("path", path.substr(0, 128))
        .str("reason", reason);
    return respond(Status::forbidden, reason);
  };
  if (!tokens_equal(header_value(head, kCsrfHeader), caller->session.csrf_token)) {
    return refused("missing or wrong CSRF token");
  }
  if (path.starts_with(kActionPrefix) && caller->session.role != Role::admin) {
    return refused("actions need the admin token");
  }
  return std::nullopt;
}

http::net::awaitable<http::Response> Console::sign_in(http::Request& request) {
  Sessions::SignIn signed_in;
  if (auto fields = parse_form(request.body())) {
    if (auto token = fields->find("token"); token != fields->end()) signed_in = sessions_.sign_in(token->second);
  }
  const std::optional<Role> role = signed_in.role;
  if (!role) {
    // Counted here; slowed like every 401 of an authenticating route (its head check makes
    // it one) by the session: refusal_delay_ms, on connections never trusted (this one,
    // since it is closed after each failure).
    if (options_.refusals) options_.refusals->count(http::Refusal::console_sign_in);
    http::Response response = console_error(Status::unauthorized, "wrong token");
    response.keep_alive(false);
    co_return response;
  }
  auto& made = signed_in.session;
  if (!made) {
    // Every session is an admin's: a read-only sign-in may not end one (docs/console.md).
    constexpr std::string_view kFull = "every console session is an admin's; sign one out or wait for one to end";
    log::warn("console_sign_in_refused").str("token", role_name(*role)).str("reason", kFull);
    co_return console_error(Status::service_unavailable, kFull);
  }
  Sessions::Created& created = *made;
  log::info("console_sign_in").str("token", role_name(*role)).str("session", created.view.tag);
  http::Response response = http::json_response(Status::ok, session_json(created.view));
  response.set(field::cache_control, "no-store");
  const auto max_age = std::chrono::duration_cast<std::chrono::seconds>(options_.policy.lifetime).count();
  response.set(field::set_cookie, std::string(kSessionCookie) + "=" + created.id + "; Path=" + std::string(kPrefix) +
                                      "; Max-Age=" + std::to_string(max_age) + "; HttpOnly; SameSite=Strict" +
                                      (options_.secure_cookie ? "; Secure" : ""));
  co_return response;
}

http::net::awaitable<http::Response> Console::sign_out(http::Request& request) {
  if (auto caller = caller_of(request)) {
    sessions_.remove(caller->session_id);
    log::info("console_sign_out").str("token", role_name(caller->session.role)).str("session", caller->session.tag);
  }
  http::Response response = http::text_response(Status::no_content, "", "text/plain");
  response.set(field::set_cookie, std::string(kSessionCookie) + "=; Path=" + std::string(kPrefix) +
                                      "; Max-Age=0; HttpOnly; SameSite=Strict" +
                                      (options_.secure_cookie ? "; Secure" : ""));
  co_return response;
}

namespace {

// A form field logged with a console action: a name of ours' shape (lower-case letters,
// digits, '_'), never one of the line's own keys, so the sender cannot add or replace a
// key of the line (e.g. "event", "error").
bool loggable_field(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (const char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  for (const std::string_view taken : {"level", "ts", "event", "token", "session", "action", "error", "outcome"}) {
    if (name == taken) return false;
  }
  return true;
}

}  // namespace

http::net::awaitable<http::Response> Console::action(http::Request& request) {
  auto caller = caller_of(request);  // checked before the body; the session may have ended since
  if (!caller || caller->session.role != Role::admin) co_return console_error(Status::forbidden, "not an admin session");
  ActionRequest action;
  action.name = std::string(http::Router::path_of(request.target()).substr(kActionPrefix.size()));
  if (std::find(std::begin(kActions), std::end(kActions), action.name) == std::end(kActions)) {
    co_return console_error(Status::not_found, "no such action");
  }
  auto fields = parse_form(request.body());
  if (!fields) co_return console_error(Status::bad_request, fields.error());
  action.fields = std::move(*fields);
  if (!actions_) co_return console_error(Status::service_unavailable, "actions are not available in this server");
  auto line = log::info("console_action");
  line.str("token", role_name(caller->session.role)).str("session", caller->session.tag).str("action", action.name);
  for (const auto& [name, value] : action.fields) {
    // Whole: a console body is at most 4 KiB, and the record must say what was acted on
    // (a list of 200 ids to requeue, say).
    if (loggable_field(name)) line.str(name, value);
  }
  // (An awaited value must be default-constructible: Result is not.)
  auto outcome = co_await http::run_off_io(pool_, [this, &action] {
    return std::optional<Result<std::string>>(actions_->run(action));
  });
  if (!*outcome) {
    line.str("error", outcome->error());
    // A lock held too long is said in words; the store's own message (on PostgreSQL the
    // statement it was running) is for the log line above.
    if (outcome->error_kind() == ErrorKind::busy) {
      co_return console_error(Status::service_unavailable,
                              "the database is busy (another process held a lock it needed for too long); try again");
    }
    co_return console_error(outcome->error_kind() == ErrorKind::data ? Status::bad_request : Status::internal_server_error,
                            outcome->error());
  }
  line.str("outcome", **outcome);
  http::Response response = http::json_response(Status::ok, std::move(**outcome));
  response.set(field::cache_control, "no-store");
  co_return response;
}

http::Response Console::asset(const http::Request& request, std::string_view name, bool signed_in) {
  const EmbeddedAsset* found = find_asset(name);
  bool is_public = false;
  for (auto p : kPublicAssets) is_public = is_public || p == name;
  // Without a session, only the sign-in page's files: anything else is 401, whether or not
  // it exists (which files the console has is not told to a stranger).
  if (!signed_in && !is_public) return console_error(Status::unauthorized, "not signed in");
  if (!found) return console_error(Status::not_found, "no such file");
  const auto match = request.find(field::if_none_match);
  if (match != request.end() && std::string_view(match->value()) == found->etag) {
    http::Response response{Status::not_modified, 11};
    response.set(field::etag, found->etag);
    response.set(field::cache_control, "private, no-cache");
    return response;
  }
  http::Response response = http::text_response(Status::ok, std::string(found->bytes), found->content_type);
  response.set(field::etag, found->etag);
  // Revalidated on every use (cheap: a 304), so a new binary's files are never mixed with old ones.
  response.set(field::cache_control, "private, no-cache");
  return response;
}

http::net::awaitable<http::Response> Console::get(http::Request& request) {
  const std::string_view target = request.target();
  const std::string_view path = http::Router::path_of(target);
  if (takes_post_only(path)) co_return post_only_refusal();  // to anyone: which methods a path takes is no secret
  auto caller = caller_of(request);
  if (path == kPrefix) {
    http::Response response = asset(request, caller ? "app.html" : "sign-in.html", true);
    response.set(field::cache_control, "no-store");
    co_return response;
  }
  if (path.starts_with(kAssetPrefix)) co_return asset(request, path.substr(kAssetPrefix.size()), caller.has_value());
  if (!caller) co_return console_error(Status::unauthorized, "not signed in");
  if (path == "/console/api/session") {
    http::Response response = http::json_response(Status::ok, session_json(caller->session));
    response.set(field::cache_control, "no-store");
    co_return response;
  }
  if (path == "/console/api/overview") {
    http::Response response = http::json_response(Status::ok, co_await overview_.json());
    response.set(field::cache_control, "no-store");
    co_return response;
  }
  std::optional<std::string> read_target;
  if (path == kReadByQuery) {
    read_target = read_target_of(target);
    if (!read_target) co_return console_error(Status::bad_request, "target: expected one parameter, a path under /v1/");
  } else if (path.starts_with(kReadApiPrefix)) {
    read_target = std::string(target.substr(kPrefix.size() - 1));
  }
  if (!read_target) co_return console_error(Status::not_found, "no such path");
  co_return co_await read_api_.handle_trusted(std::move(*read_target), pool_);
}

}  // namespace hh::console
