#pragma once
// The operators' console under /console/ (spec §12; docs/console.md): its pages and files
// (embedded_assets.h), sign-in and sessions (console_sessions.h), the overview's history
// (overview_history.h), the read API behind the session, and the admin's actions.
//
//   GET  /console/                   the console when signed in, else the sign-in page
//   GET  /console/assets/NAME        its files (ETag; only the sign-in page's without a session)
//   POST /console/sign-in            token=…  → 204 + session cookie, or 401 (counted, slowed)
//   POST /console/sign-out           ends the session (CSRF)
//   GET  /console/api/session        {"role":"read"|"admin","csrf_token":…,"expires_at":…}
//   GET  /console/api/overview       the last hour's figures (overview_history.h)
//   GET  /console/v1/…               the read API's pages (api/read_api.h), by session
//   POST /console/api/actions/NAME   an action (admin session, CSRF; console_actions.h)
//
// Every answer carries a strict Content-Security-Policy (scripts, styles, images and
// requests from this origin only, no inline script, no framing), nosniff and no-referrer.
// Requests that change state need the session's CSRF token in X-CSRF-Token, and are
// refused before their body is read without it (router head check); the sign-in needs
// X-Requested-With (a cross-site form cannot send it without a CORS preflight, which is
// never granted). Bodies of console POSTs are small: kMaxFormBytes.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "api/read_api.h"
#include "console/console_actions.h"
#include "console/console_sessions.h"
#include "console/overview_history.h"
#include "receiver/http/off_io.h"
#include "receiver/http/refusals.h"
#include "receiver/http/router.h"

namespace hh::console {

inline constexpr size_t kMaxFormBytes = 4096;
inline constexpr std::string_view kRequestedWithHeader = "x-requested-with";

struct ConsoleOptions {
  // The tokens at start, handed to sessions() (and cleared here): a reload replaces them
  // there (Sessions::replace_tokens).
  std::string read_token;   // the read API's token: a read-only session
  std::string admin_token;  // "" : no admin sign-in
  SessionPolicy policy;
  bool secure_cookie = false;  // the listener speaks TLS: the cookie gets `Secure`
  // A failed sign-in waits this long for its answer, like other 401s (receiver/http/session.h).
  http::Refusals* refusals = nullptr;  // failed sign-ins (console_sign_in), POSTs refused before their body; may be null
};

class Console {
 public:
  // `read_api`, `pool`, `overview` and `actions` (null: no actions) must outlive the router's use.
  Console(ConsoleOptions options, api::ReadApi& read_api, http::BlockingPool& pool, OverviewHistory& overview,
          ConsoleActions* actions, Sessions::Clock now_ms);

  void mount(http::Router& router);
  Sessions& sessions() { return sessions_; }

 private:
  struct Caller {
    std::string session_id;
    SessionView session;
  };
  std::optional<Caller> caller_of(const http::RequestHead& head);
  std::optional<http::Response> check_post(const http::RequestHead& head, bool sign_in);
  http::net::awaitable<http::Response> get(http::Request& request);
  http::net::awaitable<http::Response> sign_in(http::Request& request);
  http::net::awaitable<http::Response> sign_out(http::Request& request);
  http::net::awaitable<http::Response> action(http::Request& request);
  http::Response asset(const http::Request& request, std::string_view name, bool signed_in);

  ConsoleOptions options_;  // its tokens cleared once in sessions_
  Sessions sessions_;
  api::ReadApi& read_api_;
  http::BlockingPool& pool_;
  OverviewHistory& overview_;
  ConsoleActions* actions_;
};

// The headers every console answer carries (CSP and friends).
void add_security_headers(http::Response& response);

}  // namespace hh::console
