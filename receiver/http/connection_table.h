#pragma once
// The listener's open connections, and the limits on them (spec §2):
//   - at most max_connections in all, and max_connections_per_ip from one client;
//   - a client is an IPv4 address or an IPv6 /64 (one host usually holds a whole /64; an
//     IPv4-mapped IPv6 address, ::ffff:a.b.c.d, counts as its IPv4 address);
//   - once half of max_connections are taken, at most kMaxWaitingPerAddress from one
//     client that have not yet sent a request (sockets that only wait are an attacker's:
//     then one client cannot hold more than this many of them); a newcomer of a client
//     holding that many is admitted in place of the one of them waiting the longest (its
//     silent sockets, even reconnecting at once, cannot lock out its next connection:
//     the service's, or a proxy's), and refused (per_ip_waiting_limit) only when all of
//     them are in the middle of their first request's head; a connection whose
//     request was refused and answered has sent one: while it drops what still arrives
//     (lingering_close.h) it is idle like a keep-alive one, and makes room as one;
//   - a client at max_connections_per_ip is admitted in place of its own connection idle
//     the longest (whatever it did before, however young: it competes with itself alone),
//     and refused only when none of its connections is idle: its sockets left open cannot
//     lock out its next connection (the service's, or a proxy's behind which every client
//     has the proxy's address);
//   - when all are taken, the connection that has been idle the longest between requests
//     (waiting for its next request, or for its first), whatever it did before, is closed
//     to admit the new one, as nginx reuses idle keep-alive connections; one in the middle
//     of a request (head or body arriving, commit pending, answer being written) is never
//     chosen. When none has been idle kMinIdleBeforeEviction, a newcomer from a proven
//     client (below) closes instead an idle connection of a client not proven, young as it
//     is: the one idle the longest of those waiting for a first request (a TLS handshake
//     pending included), else of those between requests (a 401's wait and a TLS close
//     count: session.cpp, listener.cpp); else the new connection is closed at once.
// So neither sockets that never send a request nor keep-alive connections left open can
// lock the service out, however many there are; and once the service has delivered from
// an address, sockets from clients that never signed a delivery cannot keep it out, even
// when they reconnect as soon as they are closed (every socket past its second of idling
// would go to an attacker's reconnect instead of the service's next connection).
//
// The table also keeps the in-flight body budget (body_budget.h) from being taken by
// clients that never signed a delivery: until a client is proven (one of its connections
// carried a correctly signed delivery, within kProvenFor), its bodies together may hold at
// most ConnectionLimits::unproven_body_bytes, and all such clients' together at most
// all_unproven_body_bytes. A signature is checked only once the body is in, so forged but
// well-formed heads announcing large bodies that never come would otherwise let a few
// addresses hold the whole budget, and every delivery would get 503.
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

// A connection makes room for a newcomer of another client only after it has been idle
// this long (for one of its own client at its cap, at once): sockets that reconnect as
// soon as they are closed then turn over at most once per this interval each, not as fast
// as the listener can close them, and a keep-alive connection between two deliveries in
// quick succession keeps its place.
inline constexpr std::chrono::milliseconds kMinIdleBeforeEviction{1000};
// Connections from one client that have not yet sent a request, once half of
// max_connections are taken. The service's connections send their request at once. (Below
// half, a burst of new connections from one client is let in whole.) Behind a proxy every
// connection has the proxy's address: raise max_connections_per_ip there; a proxy sends
// complete requests, so this rule still holds.
inline constexpr size_t kMaxWaitingPerAddress = 8;

// How long a client stays proven after its last correctly signed delivery. The service
// sends from a few addresses, every few minutes at least while it has anything to send.
inline constexpr std::chrono::hours kProvenFor{24};
// How often a connection that keeps carrying signed deliveries says so again.
inline constexpr std::chrono::minutes kProvenRefresh{10};
// Proven clients remembered at most (each one needed the signing secret).
inline constexpr size_t kMaxProvenClients = 4096;

struct ConnectionLimits {
  size_t max_connections = 1024;
  size_t max_connections_per_ip = 64;
  // Body bytes the requests of one client not proven may hold together; 0: no bound but
  // the budget's. The listener's owner sets it to the client's share of the budget (as of
  // the connections: max_connections_per_ip of max_connections), and never below one body
  // of max_body_bytes, which a first delivery may be.
  uint64_t unproven_body_bytes = 0;
  // And what all clients not proven may hold together: the rest of the budget stays for
  // proven ones (half of it, unless one body of max_body_bytes needs more). 0: no bound.
  uint64_t all_unproven_body_bytes = 0;
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
  // Its first request's head passed the checks made before the body...
  void head_accepted(const SessionControl& control);
  // ... or a request of it was refused (the answer about to be written, the connection to
  // linger and close): either way it is no longer waiting for a first request.
  void request_refused(const SessionControl& control);

  // A connection of `control`'s client carried a correctly signed delivery.
  void proven(const SessionControl& control, Clock::time_point now = Clock::now());
  // Counts `bytes` more body held by a request of `control`'s client: what it counted (0
  // for a proven client), or nullopt when they would take an unproven client past
  // unproven_body_bytes, or all unproven clients past all_unproven_body_bytes (nothing
  // counted).
  std::optional<uint64_t> hold_body(const SessionControl& control, uint64_t bytes, Clock::time_point now = Clock::now());
  void release_body(const SessionControl& control, uint64_t counted);

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
    bool waiting = true;                     // no request yet (accepted past its head, or refused)
    bool evicted = false;                    // chosen to make room
  };
  struct FromClient {
    size_t connections = 0;
    size_t waiting = 0;          // of them, not yet past their first request's head (nor refused)
    uint64_t unproven_body = 0;  // body bytes its requests hold while it is not proven
  };
  // Closes a connection to admit one from `client` (the rule above); false when none may
  // be.  REQUIRES(mutex_)
  bool make_room(const net::ip::address& client, Clock::time_point now);
  // Which of a client's own connections may make room for another of it.
  enum class Among {
    any,      // at max_connections_per_ip
    waiting,  // at kMaxWaitingPerAddress: only one that has not sent a request yet
  };
  // Closes `client`'s own connection idle the longest (of `among`), to admit another of it
  // at that cap; false when none is idle.  REQUIRES(mutex_)
  bool make_room_from(const net::ip::address& client, Among among);
  void stop_waiting(const SessionControl& control);  // EXCLUDES(mutex_)
  void evict(Entry& victim);                                                  // REQUIRES(mutex_)
  bool is_proven(const net::ip::address& client, Clock::time_point now) const;  // REQUIRES(mutex_)

  const ConnectionLimits limits_;
  Refusals* const refusals_;
  mutable std::mutex mutex_;
  std::unordered_map<const SessionControl*, Entry> entries_;  // GUARDED_BY(mutex_)
  std::map<net::ip::address, FromClient> per_client_;        // GUARDED_BY(mutex_)
  IdleList idle_;                                              // GUARDED_BY(mutex_)
  std::map<net::ip::address, Clock::time_point> proven_;       // GUARDED_BY(mutex_), last signed delivery
  uint64_t unproven_body_ = 0;                                 // GUARDED_BY(mutex_), all FromClient::unproven_body
};

// What one request's body holds of its client's bound (ConnectionTable::hold_body); gives
// it back when destroyed.
class ClientBodyHold {
 public:
  // `table` null: no bound (a connection proven itself, or a session outside a listener).
  ClientBodyHold(ConnectionTable* table, const SessionControl& control) : table_(table), control_(control) {}
  ClientBodyHold(const ClientBodyHold&) = delete;
  ClientBodyHold& operator=(const ClientBodyHold&) = delete;
  ~ClientBodyHold() { release(); }

  // Grows the hold to `total` bytes; false when the client's bound does not allow it.
  bool grow_to(uint64_t total);
  void release();

 private:
  ConnectionTable* table_;
  const SessionControl& control_;
  uint64_t seen_ = 0;     // the body's bytes so far
  uint64_t counted_ = 0;  // of them, counted against the client's bound
};

}  // namespace hh::http
