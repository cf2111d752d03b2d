#include "console/console_sessions.h"

#include <algorithm>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <stdexcept>

#include "common/sha256.h"

namespace hh::console {
namespace {

std::string base64url(const unsigned char* bytes, size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < size; ++i) {
    buffer = (buffer << 8) | bytes[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(buffer >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (6 - bits)) & 0x3f]);
  return out;
}

std::string digest_key(std::string_view id) {
  const auto digest = sha256(id);
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

bool digest_equal(const std::array<unsigned char, 32>& a, const std::array<unsigned char, 32>& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// A session id or CSRF token as random_token() makes them: 43 base64url characters.
bool well_formed(std::string_view token) {
  if (token.size() != 43) return false;
  for (char c : token) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string_view role_name(Role role) { return role == Role::admin ? "admin" : "read"; }

std::string random_token() {
  unsigned char bytes[32];
  // A CSPRNG failure leaves nothing safe to hand out: a bug or a broken system.
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("RAND_bytes failed");
  return base64url(bytes, sizeof bytes);
}

bool tokens_equal(std::string_view a, std::string_view b) { return digest_equal(sha256(a), sha256(b)); }

std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t end = std::min(header.find(';'), header.size());
    std::string_view pair = header.substr(0, end);
    header.remove_prefix(std::min(end + 1, header.size()));
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    if (pair.substr(0, eq) == name) {
      std::string_view value = pair.substr(eq + 1);
      while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
      return value;
    }
  }
  return std::nullopt;
}

Sessions::Sessions(std::string_view read_token, std::string_view admin_token, SessionPolicy policy, Clock now_ms)
    : policy_(policy), now_ms_(std::move(now_ms)) {
  replace_tokens(read_token, admin_token);
}

std::optional<Role> Sessions::role_of_digest(const Digest& digest) const {
  // Both compared every time, so the answer's time does not say which one matched.
  const bool admin = admin_digest_ && digest_equal(digest, *admin_digest_);
  const bool read = read_digest_ && digest_equal(digest, *read_digest_);
  if (admin) return Role::admin;
  if (read) return Role::read;
  return std::nullopt;
}

std::optional<Role> Sessions::role_of_token(std::string_view presented) const {
  if (presented.empty()) return std::nullopt;
  const auto digest = sha256(presented);
  std::lock_guard lock(mutex_);
  return role_of_digest(digest);
}

Sessions::SignIn Sessions::sign_in(std::string_view presented) {
  if (presented.empty()) return {};
  const auto digest = sha256(presented);
  std::lock_guard lock(mutex_);
  SignIn result;
  result.role = role_of_digest(digest);
  if (result.role) result.session = create_locked(*result.role);
  return result;
}

Sessions::Replaced Sessions::replace_tokens(std::string_view read_token, std::string_view admin_token) {
  const auto digest_of = [](std::string_view token) {
    return token.empty() ? std::optional<Digest>() : std::optional<Digest>(sha256(token));
  };
  const auto differ = [](const std::optional<Digest>& a, const std::optional<Digest>& b) {
    return a.has_value() != b.has_value() || (a && !digest_equal(*a, *b));
  };
  const auto read = digest_of(read_token);
  const auto admin = digest_of(admin_token);
  std::lock_guard lock(mutex_);
  Replaced replaced{.read_changed = differ(read, read_digest_),
                    .admin_changed = differ(admin, admin_digest_),
                    .sessions_ended = 0};
  read_digest_ = read;
  admin_digest_ = admin;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const bool ended = it->second.role == Role::admin ? replaced.admin_changed : replaced.read_changed;
    if (ended) ++replaced.sessions_ended;
    it = ended ? entries_.erase(it) : std::next(it);
  }
  return replaced;
}

int64_t Sessions::expires_at(const Entry& entry) const {
  return std::min(entry.created_ms + policy_.lifetime.count(), entry.last_seen_ms + policy_.idle.count());
}

bool Sessions::evict_one(Role for_role) {
  // A read-only sign-in replaces a read-only session only: a holder of the read token
  // signing in again and again would otherwise sign every admin out.
  const auto replaceable = [&](const Entry& entry) {
    return for_role == Role::admin || entry.role == Role::read;
  };
  auto first = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (!replaceable(it->second)) continue;
    if (first == entries_.end() || expires_at(it->second) < expires_at(first->second)) first = it;
  }
  if (first == entries_.end()) return false;
  entries_.erase(first);
  return true;
}

std::optional<Sessions::Created> Sessions::create(Role role) {
  std::lock_guard lock(mutex_);
  return create_locked(role);
}

std::optional<Sessions::Created> Sessions::create_locked(Role role) {
  Created created;
  created.id = random_token();
  const std::string key = digest_key(created.id);
  const int64_t now = now_ms_();
  Entry entry{role, random_token(), sha256_hex(created.id).substr(0, 8), now, now};
  created.view = SessionView{role, entry.csrf_token, expires_at(entry), entry.tag};
  // Forget what expired, then make room.
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = expires_at(it->second) <= now ? entries_.erase(it) : std::next(it);
  }
  while (entries_.size() >= kMaxSessions) {
    if (!evict_one(role)) return std::nullopt;
  }
  entries_.emplace(key, std::move(entry));
  return created;
}

std::optional<SessionView> Sessions::find(std::string_view id) {
  if (!well_formed(id)) return std::nullopt;
  const std::string key = digest_key(id);
  const int64_t now = now_ms_();
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  if (expires_at(it->second) <= now) {
    entries_.erase(it);
    return std::nullopt;
  }
  it->second.last_seen_ms = now;
  return SessionView{it->second.role, it->second.csrf_token, expires_at(it->second), it->second.tag};
}

void Sessions::remove(std::string_view id) {
  if (!well_formed(id)) return;
  const std::string key = digest_key(id);
  std::lock_guard lock(mutex_);
  entries_.erase(key);
}

size_t Sessions::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace hh::console
