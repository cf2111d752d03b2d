#include "receiver/http/connection_table.h"

#include <algorithm>

#include "receiver/http/session.h"

namespace hh::http {

net::ip::address client_of(const net::ip::address& peer) {
  if (!peer.is_v6()) return peer;
  const net::ip::address_v6 v6 = peer.to_v6();
  if (v6.is_v4_mapped()) return net::ip::make_address_v4(net::ip::v4_mapped, v6);
  net::ip::address_v6::bytes_type bytes = v6.to_bytes();
  for (size_t i = 8; i < bytes.size(); ++i) bytes[i] = 0;
  return net::ip::address_v6(bytes);
}

std::optional<Refusal> ConnectionTable::admit(const std::shared_ptr<SessionControl>& control,
                                              const net::ip::address& peer, Clock::time_point now) {
  const net::ip::address client = client_of(peer);
  std::lock_guard lock(mutex_);
  bool room_made = false;  // one of the client's own connections gives its place
  if (const auto from = per_client_.find(client); from != per_client_.end()) {
    const bool scarce = entries_.size() >= limits_.max_connections / 2;
    if (scarce && from->second.waiting >= kMaxWaitingPerAddress) {
      // The newcomer takes the place of one that has sent nothing: the client still holds
      // no more of them, and its silent sockets cannot lock out its next connection.
      if (!make_room_from(client, Among::waiting)) return Refusal::per_ip_waiting_limit;
      room_made = true;
    } else if (from->second.connections >= limits_.max_connections_per_ip) {
      if (!make_room_from(client, Among::any)) return Refusal::per_ip_limit;
      room_made = true;
    }
  }
  if (!room_made && entries_.size() >= limits_.max_connections && !make_room(client, now)) {
    return Refusal::connection_limit;
  }
  FromClient& from = per_client_[client];
  ++from.connections;
  ++from.waiting;
  Entry& entry = entries_[control.get()];
  entry.control = control;
  entry.client = client;
  entry.idle = idle_.insert(idle_.end(), Idle{control.get(), now});
  return std::nullopt;
}

bool ConnectionTable::make_room(const net::ip::address& client, Clock::time_point now) {
  if (!idle_.empty() && now - idle_.front().since >= kMinIdleBeforeEviction) {
    evict(entries_.at(idle_.front().key));
    return true;
  }
  if (!is_proven(client, now)) return false;
  // Walks of the idle list, only when the table is full, nothing has idled a second, and
  // the newcomer is the service's: sockets that never sent a request first (an attacker's,
  // most likely), then any other idle one of a client never proven (a keep-alive connection
  // between requests, a 401's wait: a reader of the read API may lose one to the service
  // then, and reconnects).
  auto victim = std::find_if(idle_.begin(), idle_.end(), [&](const Idle& idle) {
    const Entry& entry = entries_.at(idle.key);
    return entry.waiting && !is_proven(entry.client, now);
  });
  if (victim == idle_.end()) {
    victim = std::find_if(idle_.begin(), idle_.end(), [&](const Idle& idle) {
      return !is_proven(entries_.at(idle.key).client, now);
    });
  }
  if (victim == idle_.end()) return false;
  evict(entries_.at(victim->key));
  return true;
}

bool ConnectionTable::make_room_from(const net::ip::address& client, Among among) {
  // A walk of the idle list, only when a client is at one of its caps: the client competes
  // with itself alone here, so its connection idle the longest goes however young it is
  // (the second of kMinIdleBeforeEviction keeps other clients' reconnects from churning
  // the table; a client churning its own slots costs no one else one).
  const auto victim = std::find_if(idle_.begin(), idle_.end(), [&](const Idle& idle) {
    const Entry& entry = entries_.at(idle.key);
    return entry.client == client && (among == Among::any || entry.waiting);
  });
  if (victim == idle_.end()) return false;
  evict(entries_.at(victim->key));
  return true;
}

bool ConnectionTable::is_proven(const net::ip::address& client, Clock::time_point now) const {
  const auto proven = proven_.find(client);
  return proven != proven_.end() && now - proven->second < kProvenFor;
}

void ConnectionTable::evict(Entry& victim) {
  if (victim.idle) {
    idle_.erase(*victim.idle);
    victim.idle.reset();
  }
  victim.evicted = true;
  // It stays in the table until its session ends (its descriptor is open until then), so
  // a burst of newcomers each closes another idle connection, never the same one twice.
  net::post(victim.control->executor, [control = victim.control] {
    if (control->transport) control->transport->close();
  });
  if (refusals_) refusals_->count(Refusal::evicted_idle);
}

void ConnectionTable::remove(const SessionControl& control) {
  std::lock_guard lock(mutex_);
  const auto at = entries_.find(&control);
  if (at == entries_.end()) return;
  Entry& entry = at->second;
  if (entry.idle) idle_.erase(*entry.idle);
  if (auto from = per_client_.find(entry.client); from != per_client_.end()) {
    if (entry.waiting) --from->second.waiting;
    if (--from->second.connections == 0) per_client_.erase(from);
  }
  entries_.erase(at);
}

void ConnectionTable::idle(const SessionControl& control, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto at = entries_.find(&control);
  if (at == entries_.end() || at->second.idle || at->second.evicted) return;
  at->second.idle = idle_.insert(idle_.end(), Idle{&control, now});
}

bool ConnectionTable::busy(const SessionControl& control) {
  std::lock_guard lock(mutex_);
  const auto at = entries_.find(&control);
  if (at == entries_.end()) return true;
  if (at->second.evicted) return false;
  if (at->second.idle) {
    idle_.erase(*at->second.idle);
    at->second.idle.reset();
  }
  return true;
}

void ConnectionTable::head_accepted(const SessionControl& control) { stop_waiting(control); }

void ConnectionTable::request_refused(const SessionControl& control) { stop_waiting(control); }

void ConnectionTable::stop_waiting(const SessionControl& control) {
  std::lock_guard lock(mutex_);
  const auto at = entries_.find(&control);
  if (at == entries_.end() || !at->second.waiting) return;
  at->second.waiting = false;
  if (auto from = per_client_.find(at->second.client); from != per_client_.end()) --from->second.waiting;
}

void ConnectionTable::for_each(const std::function<void(SessionControl&)>& action) {
  std::lock_guard lock(mutex_);
  for (const auto& [key, entry] : entries_) {
    net::post(entry.control->executor, [control = entry.control, action] { action(*control); });
  }
}

void ConnectionTable::proven(const SessionControl& control, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto at = entries_.find(&control);
  if (at == entries_.end()) return;
  if (proven_.size() >= kMaxProvenClients && !proven_.contains(at->second.client)) {
    std::erase_if(proven_, [now](const auto& client) { return now - client.second >= kProvenFor; });
    if (proven_.size() >= kMaxProvenClients) return;
  }
  proven_[at->second.client] = now;
}

std::optional<uint64_t> ConnectionTable::hold_body(const SessionControl& control, uint64_t bytes,
                                                   Clock::time_point now) {
  if (limits_.unproven_body_bytes == 0) return 0;
  std::lock_guard lock(mutex_);
  const auto at = entries_.find(&control);
  if (at == entries_.end()) return 0;
  if (const auto proven = proven_.find(at->second.client); proven != proven_.end()) {
    if (now - proven->second < kProvenFor) return 0;
    proven_.erase(proven);
  }
  const auto fits = [bytes](uint64_t held, uint64_t limit) {
    return limit == 0 || bytes <= limit - std::min(held, limit);
  };
  FromClient& from = per_client_[at->second.client];
  if (!fits(from.unproven_body, limits_.unproven_body_bytes) ||
      !fits(unproven_body_, limits_.all_unproven_body_bytes)) {
    return std::nullopt;
  }
  from.unproven_body += bytes;
  unproven_body_ += bytes;
  return bytes;
}

void ConnectionTable::release_body(const SessionControl& control, uint64_t counted) {
  if (counted == 0) return;
  std::lock_guard lock(mutex_);
  const auto at = entries_.find(&control);
  if (at == entries_.end()) return;
  if (auto from = per_client_.find(at->second.client); from != per_client_.end()) {
    from->second.unproven_body -= std::min(counted, from->second.unproven_body);
  }
  unproven_body_ -= std::min(counted, unproven_body_);
}

bool ClientBodyHold::grow_to(uint64_t total) {
  if (!table_ || total <= seen_) return true;
  const auto counted = table_->hold_body(control_, total - seen_);
  if (!counted) return false;
  seen_ = total;
  counted_ += *counted;
  return true;
}

void ClientBodyHold::release() {
  if (table_) table_->release_body(control_, counted_);
  seen_ = 0;
  counted_ = 0;
}

size_t ConnectionTable::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace hh::http
