#include "receiver/http/connection_table.h"

#include "receiver/http/session.h"

namespace hh::http {

std::optional<Refusal> ConnectionTable::admit(const std::shared_ptr<SessionControl>& control,
                                              const net::ip::address& peer) {
  std::lock_guard lock(mutex_);
  if (const auto from = per_address_.find(peer); from != per_address_.end()) {
    if (from->second.connections >= limits_.max_connections_per_ip) return Refusal::per_ip_limit;
    const bool scarce = entries_.size() >= limits_.max_connections / 2;
    if (scarce && from->second.waiting >= kMaxWaitingPerAddress) return Refusal::per_ip_limit;
  }
  const auto now = std::chrono::steady_clock::now();
  if (entries_.size() >= limits_.max_connections) {
    if (waiting_.empty() || now - waiting_.front().since < kMinWaitBeforeEviction) return Refusal::connection_limit;
    Entry& oldest = entries_.at(waiting_.front().key);
    stop_waiting(oldest);
    net::post(oldest.control->executor, [victim = oldest.control] {
      if (victim->transport) victim->transport->close();
    });
    if (refusals_) refusals_->count(Refusal::evicted_idle);
  }
  FromAddress& from = per_address_[peer];
  ++from.connections;
  ++from.waiting;
  Entry& entry = entries_[control.get()];
  entry.control = control;
  entry.peer = peer;
  entry.waiting = waiting_.insert(waiting_.end(), Waiting{control.get(), now});
  return std::nullopt;
}

void ConnectionTable::remove(const SessionControl& control) {
  std::lock_guard lock(mutex_);
  const auto at = entries_.find(&control);
  if (at == entries_.end()) return;
  stop_waiting(at->second);
  if (auto from = per_address_.find(at->second.peer); from != per_address_.end() && --from->second.connections == 0) {
    per_address_.erase(from);
  }
  entries_.erase(at);
}

void ConnectionTable::idle(const SessionControl&) {}

bool ConnectionTable::busy(const SessionControl&) { return true; }

void ConnectionTable::head_accepted(const SessionControl& control) {
  std::lock_guard lock(mutex_);
  if (const auto at = entries_.find(&control); at != entries_.end()) stop_waiting(at->second);
}

size_t ConnectionTable::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

void ConnectionTable::stop_waiting(Entry& entry) {
  if (!entry.waiting) return;
  if (auto from = per_address_.find(entry.peer); from != per_address_.end()) --from->second.waiting;
  waiting_.erase(*entry.waiting);
  entry.waiting.reset();
}

}  // namespace hh::http
