#pragma once
// Who is signed in to the console (docs/console.md, "Where and who"): a table of
// sessions kept in memory only (a restart signs everyone out), each created by signing in
// with a token and named by a random 256-bit id that the browser holds in an HttpOnly
// cookie. The table holds SHA-256 digests of the ids, never the ids themselves.
//
// Roles: the read API's token gives a read-only session; the console's admin token
// (`[console] admin_token_file`) one that may also act (requeue, pause, backfill…).
// A session ends `lifetime` after sign-in, after `idle` without a request, at sign-out, or
// when a reload replaces or withdraws the token of its role (replace_tokens): a rotated
// token is revoked, and so is what was signed in with it.
// Each session has a CSRF token of its own (random, 256 bits), which every state-changing
// request must echo in a header.
//
// Memory is bounded: at most kMaxSessions; a new one then replaces the one that would
// expire first, of its role or below: a read-only sign-in never ends an admin's session,
// and is refused when every session is an admin's. Only a correct token creates a
// session, so an unauthenticated client cannot fill the table.
//
// Thread-safe (one mutex; every call is short).
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hh::console {

inline constexpr size_t kMaxSessions = 1024;
inline constexpr std::string_view kSessionCookie = "hh_console";
inline constexpr std::string_view kCsrfHeader = "x-csrf-token";

enum class Role { read, admin };
std::string_view role_name(Role role);

struct SessionPolicy {
  std::chrono::milliseconds lifetime = std::chrono::hours(8);
  std::chrono::milliseconds idle = std::chrono::hours(1);
};

// What a request learns about its session.
struct SessionView {
  Role role = Role::read;
  std::string csrf_token;     // base64url, 43 characters
  int64_t expires_at_ms = 0;  // the earlier of the lifetime's and the idle deadline
  std::string tag;            // 8 hex digits naming the session in logs (from its digest; not the id)
};

class Sessions {
 public:
  using Clock = std::function<int64_t()>;  // Unix ms

  // `admin_token` empty: no admin sign-in.
  Sessions(std::string_view read_token, std::string_view admin_token, SessionPolicy policy, Clock now_ms);

  // The role a presented token signs in as, or nullopt. Compares SHA-256 digests in
  // constant time (the length of the token is not revealed either).
  std::optional<Role> role_of_token(std::string_view presented) const;

  struct Created {
    std::string id;  // the cookie value, base64url, 43 characters
    SessionView view;
  };
  // A session of `role`, whose token the caller has checked. nullopt: a read-only sign-in
  // while every one of the kMaxSessions is an admin's (ending one would let a holder of the
  // read token sign admins out).
  std::optional<Created> create(Role role);

  // A sign-in: the token checked and the session made as one step, so that a reload
  // between the two cannot leave a session of the token it withdrew. `role` unset: a
  // wrong token; set without `session`: refused as create() refuses.
  struct SignIn {
    std::optional<Role> role;
    std::optional<Created> session;
  };
  SignIn sign_in(std::string_view presented);

  // A reload's tokens (`admin_token` empty: no admin sign-in). Every session of a role
  // whose token changed ends at once; the others go on.
  struct Replaced {
    bool read_changed = false;
    bool admin_changed = false;
    size_t sessions_ended = 0;
  };
  Replaced replace_tokens(std::string_view read_token, std::string_view admin_token);

  // The live session named by the cookie value `id` (its idle deadline moves on), or
  // nullopt: unknown, expired (then forgotten) or malformed.
  std::optional<SessionView> find(std::string_view id);
  void remove(std::string_view id);
  size_t size() const;

  const SessionPolicy& policy() const { return policy_; }

 private:
  struct Entry {
    Role role;
    std::string csrf_token;
    std::string tag;
    int64_t created_ms;
    int64_t last_seen_ms;
  };
  using Digest = std::array<unsigned char, 32>;
  int64_t expires_at(const Entry& entry) const;
  bool evict_one(Role for_role);  // holds mutex_; false: none of for_role's or below
  std::optional<Role> role_of_digest(const Digest& digest) const;  // holds mutex_
  std::optional<Created> create_locked(Role role);                  // holds mutex_

  std::optional<Digest> read_digest_;   // GUARDED_BY(mutex_); unset: no read-only sign-in
  std::optional<Digest> admin_digest_;  // GUARDED_BY(mutex_); unset: no admin sign-in
  const SessionPolicy policy_;
  const Clock now_ms_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;  // GUARDED_BY(mutex_); key: SHA-256 of the id (raw bytes)
};

// 32 random bytes (OpenSSL's CSPRNG) as base64url without padding.
std::string random_token();

// Constant-time equality of two tokens of any length (compares their SHA-256 digests).
bool tokens_equal(std::string_view a, std::string_view b);

// The value of cookie `name` in a Cookie header ("a=1; hh_console=…"), or nullopt.
std::optional<std::string_view> cookie_value(std::string_view cookie_header, std::string_view name);

}  // namespace hh::console
