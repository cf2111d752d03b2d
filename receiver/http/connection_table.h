#pragma once
// The listener's open connections, and the limits on them (spec §2): at most
// max_connections in all and max_connections_per_ip from one client address, and, once
// connections grow scarce, at most kMaxWaitingPerAddress from one address that have not
// yet sent an acceptable request. When all are taken, a new connection takes the place of
// the oldest one that has waited kMinWaitBeforeEviction or more without sending an
// acceptable request (an idle socket, a slowloris client: what an attacker holds), which
// is closed; only when there is none is the new connection closed at once.
//
// Thread-safe: the accept loop admits, sessions report from their own executors.
#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "receiver/http/http_types.h"
#include "receiver/http/refusals.h"

namespace hh::http {

struct SessionControl;

// A connection makes room for a newcomer only after it has waited this long for its first
// request: sockets that reconnect as soon as they are closed then turn over at most once
// per this interval each, not as fast as the listener can close them.
inline constexpr std::chrono::milliseconds kMinWaitBeforeEviction{1000};
// Connections from one address that have not yet sent an acceptable request, once half of
// max_connections are taken. The service's connections send their request at once;
// sockets that only wait are an attacker's, and then one address cannot hold more than
// this many of them. (Below half, a burst of new connections from one address is let in
// whole.) Behind a proxy every connection has the proxy's address: raise
// max_connections_per_ip there; a proxy sends complete requests, so this rule still holds.
inline constexpr size_t kMaxWaitingPerAddress = 8;

struct ConnectionLimits {
  size_t max_connections = 1024;
  size_t max_connections_per_ip = 64;
};

class ConnectionTable {
 public:
  // `refusals` (may be null) must outlive the table.
  ConnectionTable(ConnectionLimits limits, Refusals* refusals) : limits_(limits), refusals_(refusals) {}
  ConnectionTable(const ConnectionTable&) = delete;
  ConnectionTable& operator=(const ConnectionTable&) = delete;

  // Registers a connection from `peer` unless a limit is reached (the reason, not yet
  // counted); may close another connection to make room (counted as evicted_idle).
  std::optional<Refusal> admit(const std::shared_ptr<SessionControl>& control, const net::ip::address& peer);
  // When the session ends (after a successful admit only).
  void remove(const SessionControl& control);

  // From the session, on its executor. The connection waits for its next request's first
  // bytes (idle); a request has begun arriving (busy: false when the connection was
  // chosen to make room meanwhile, and must end); its first request's head passed the
  // checks made before the body.
  void idle(const SessionControl& control);
  bool busy(const SessionControl& control);
  void head_accepted(const SessionControl& control);

  size_t size() const;

  // Runs `action(SessionControl&)` on each session's executor (where its fields may be touched).
  template <typename Action>
  void for_each(Action action) {
    std::lock_guard lock(mutex_);
    for (const auto& [key, entry] : entries_) {
      net::post(entry.control->executor, [control = entry.control, action] { action(*control); });
    }
  }

 private:
  struct Waiting {
    const SessionControl* key;
    std::chrono::steady_clock::time_point since;
  };
  using WaitingList = std::list<Waiting>;
  struct Entry {
    std::shared_ptr<SessionControl> control;
    net::ip::address peer;
    std::optional<WaitingList::iterator> waiting;  // set while it has not sent an acceptable request
  };
  struct FromAddress {
    size_t connections = 0;
    size_t waiting = 0;  // of them, not yet past their first request's head
  };
  void stop_waiting(Entry& entry);  // REQUIRES(mutex_)

  const ConnectionLimits limits_;
  Refusals* const refusals_;
  mutable std::mutex mutex_;
  std::unordered_map<const SessionControl*, Entry> entries_;  // GUARDED_BY(mutex_)
  std::map<net::ip::address, FromAddress> per_address_;        // GUARDED_BY(mutex_)
  // Sessions that have not yet sent an acceptable request, oldest first: the ones that
  // make room when all are taken.
  WaitingList waiting_;  // GUARDED_BY(mutex_)
};

}  // namespace hh::http
