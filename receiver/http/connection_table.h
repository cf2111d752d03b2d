#pragma once
// The listener's open connections, and the limits on them (spec §2):
//   - at most max_connections in all, and max_connections_per_ip from one client;
//   - a client is an IPv4 address or an IPv6 /64 (one host usually holds a whole /64; an
//     IPv4-mapped IPv6 address, ::ffff:a.b.c.d, counts as its IPv4 address);
//   - once half of max_connections are taken, at most kMaxWaitingPerAddress from one
//     client that have not yet sent an acceptable request (sockets that only wait are an
//     attacker's: then one client cannot hold more than this many of them);
//   - when all are taken, the connection that has been idle the longest between requests
//     (waiting for its next request, or for its first), whatever it did before, is closed
//     to admit the new one, as nginx reuses idle keep-alive connections; one in the middle
//     of a request (head or body arriving, commit pending, answer being written) is never
//     chosen. Only when none has been idle kMinIdleBeforeEviction is the new connection
//     closed at once.
// So neither sockets that never send a request nor keep-alive connections left open can
// lock the service out, however many there are.
//
// Thread-safe: the accept loop admits, sessions report from their own executors. A
// session reports idle() before it waits for a request and busy() when one begins; a
// connection chosen to make room while idle is told so by busy() (false), under the same
// lock that chose it, so it can never start a request after it was chosen.
#include <chrono>
#include <functional>
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

// A connection makes room for a newcomer only after it has been idle this long: sockets
// that reconnect as soon as they are closed then turn over at most once per this interval
// each, not as fast as the listener can close them, and a keep-alive connection between
// two deliveries in quick succession keeps its place.
inline constexpr std::chrono::milliseconds kMinIdleBeforeEviction{1000};
// Connections from one client that have not yet sent an acceptable request, once half of
// max_connections are taken. The service's connections send their request at once. (Below
// half, a burst of new connections from one client is let in whole.) Behind a proxy every
// connection has the proxy's address: raise max_connections_per_ip there; a proxy sends
// complete requests, so this rule still holds.
inline constexpr size_t kMaxWaitingPerAddress = 8;

struct ConnectionLimits {
  size_t max_connections = 1024;
  size_t max_connections_per_ip = 64;
};

// The client `peer` is counted as: itself for IPv4, its IPv4 address when IPv4-mapped,
// else its /64 prefix (the rest zeroed).
net::ip::address client_of(const net::ip::address& peer);

class ConnectionTable {
 public:
  using Clock = std::chrono::steady_clock;

  // `refusals` (may be null) must outlive the table.
  ConnectionTable(ConnectionLimits limits, Refusals* refusals) : limits_(limits), refusals_(refusals) {}
  ConnectionTable(const ConnectionTable&) = delete;
  ConnectionTable& operator=(const ConnectionTable&) = delete;

  // Registers a connection from `peer`, idle (waiting for its first request), unless a
  // limit is reached: then the reason (not yet counted). May close the connection idle
  // the longest to make room (counted as evicted_idle).
  std::optional<Refusal> admit(const std::shared_ptr<SessionControl>& control, const net::ip::address& peer,
                               Clock::time_point now = Clock::now());
  // When the session ends (after a successful admit only).
  void remove(const SessionControl& control);

  // From the session, on its executor: it waits for its next request's first bytes (a
  // candidate to make room; still idle since its last report when it was idle already)...
  void idle(const SessionControl& control, Clock::time_point now = Clock::now());
  // ... a request has begun: false when the connection was chosen to make room meanwhile
  // (its socket is being closed; the session must end without serving it).
  bool busy(const SessionControl& control);
  // Its first request's head passed the checks made before the body.
  void head_accepted(const SessionControl& control);

  size_t size() const;

  // Runs `action` on each session's executor (where its fields may be touched).
  void for_each(const std::function<void(SessionControl&)>& action);

 private:
  struct Idle {
    const SessionControl* key;
    Clock::time_point since;
  };
  using IdleList = std::list<Idle>;  // idle the longest first
  struct Entry {
    std::shared_ptr<SessionControl> control;
    net::ip::address client;                 // client_of(peer)
    std::optional<IdleList::iterator> idle;  // set while idle
    bool waiting = true;                     // no acceptable request yet
    bool evicted = false;                    // chosen to make room
  };
  struct FromClient {
    size_t connections = 0;
    size_t waiting = 0;  // of them, not yet past their first request's head
  };
  // Closes the connection idle the longest, if it has been idle long enough; false when
  // none has.  REQUIRES(mutex_)
  bool evict_idle_longest(Clock::time_point now);

  const ConnectionLimits limits_;
  Refusals* const refusals_;
  mutable std::mutex mutex_;
  std::unordered_map<const SessionControl*, Entry> entries_;  // GUARDED_BY(mutex_)
  std::map<net::ip::address, FromClient> per_client_;        // GUARDED_BY(mutex_)
  IdleList idle_;                                              // GUARDED_BY(mutex_)
};

}  // namespace hh::http
