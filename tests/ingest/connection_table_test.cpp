// The listener's connection table (receiver/http/connection_table.h) with made-up client
// addresses, which a loopback test cannot have (IPv6 clients are counted per /64, an
// IPv4-mapped IPv6 address as its IPv4 address), and with a clock of its own: which
// connection makes room when all are taken. (hostile_slots_test: the same end to end.)
#include <boost/test/unit_test.hpp>
#include <memory>
#include <vector>

#include "receiver/http/connection_table.h"
#include "receiver/http/session.h"

BOOST_AUTO_TEST_SUITE(connection_table_test)

using namespace hh::http;

namespace {

struct Table {
  explicit Table(ConnectionLimits limits) : table(limits, nullptr) {}
  // The reason a connection from `address` is refused, or "admitted".
  std::string admit(const std::string& address,
                    ConnectionTable::Clock::time_point now = ConnectionTable::Clock::now()) {
    auto control = std::make_shared<SessionControl>(io.get_executor());
    const auto refused = table.admit(control, net::ip::make_address(address), now);
    if (refused) return std::string(refusal_name(*refused));
    sessions.push_back(control);
    return "admitted";
  }
  // The same, for a connection whose request begins at once (an idle one from a client at
  // its cap would make room for the next).
  std::string admit_mid_request(const std::string& address) {
    const std::string outcome = admit(address);
    if (outcome == "admitted") table.busy(*sessions.back());
    return outcome;
  }
  net::io_context io;
  ConnectionTable table;
  std::vector<std::shared_ptr<SessionControl>> sessions;
};

}  // namespace

// (Connections in the middle of a request: idle ones would make room for the newcomer,
// below.)
BOOST_AUTO_TEST_CASE(ipv6_clients_in_one_64_share_the_per_address_cap) {
  Table t({.max_connections = 100, .max_connections_per_ip = 2});
  BOOST_TEST(t.admit_mid_request("2001:db8:1:2::1") == "admitted");
  BOOST_TEST(t.admit_mid_request("2001:db8:1:2:ffff:ffff:ffff:ffff") == "admitted");
  BOOST_TEST(t.admit_mid_request("2001:db8:1:2::3") == "per_ip_limit");  // a third from the same /64
  BOOST_TEST(t.admit_mid_request("2001:db8:1:3::1") == "admitted");      // the next /64
  BOOST_TEST(t.admit_mid_request("2001:db8:1:3::1") == "admitted");
  BOOST_TEST(t.admit_mid_request("2001:db8:1:3::2") == "per_ip_limit");
  // A connection that ends gives its group's place back.
  t.table.remove(*t.sessions.front());
  BOOST_TEST(t.admit_mid_request("2001:db8:1:2::4") == "admitted");
}

BOOST_AUTO_TEST_CASE(an_ipv4_mapped_address_counts_as_its_ipv4_address) {
  Table t({.max_connections = 100, .max_connections_per_ip = 2});
  BOOST_TEST(t.admit_mid_request("192.0.2.1") == "admitted");
  BOOST_TEST(t.admit_mid_request("::ffff:192.0.2.1") == "admitted");
  BOOST_TEST(t.admit_mid_request("192.0.2.1") == "per_ip_limit");
  BOOST_TEST(t.admit_mid_request("::ffff:192.0.2.1") == "per_ip_limit");
  // Other IPv4 addresses are other clients, though as IPv6 they share one /64.
  BOOST_TEST(t.admit_mid_request("::ffff:192.0.2.2") == "admitted");
  BOOST_TEST(t.admit_mid_request("::ffff:192.0.2.3") == "admitted");
  BOOST_TEST(t.admit_mid_request("192.0.2.2") == "admitted");
  BOOST_TEST(t.admit_mid_request("192.0.2.2") == "per_ip_limit");
}

// Black-box attack: a client at max_connections_per_ip was refused though its own
// connections sat idle between requests (behind a proxy, with the cap at max_connections,
// the service's keep-alive connections locked out its next one). Now its connection idle
// the longest makes room, young as it is; never one in the middle of a request, nor
// another client's (idle longer as it may be); refused only when none of its own is idle.
BOOST_AUTO_TEST_CASE(a_client_at_its_cap_gets_in_in_place_of_its_own_connection_idle_the_longest) {
  using namespace std::chrono_literals;
  Table t({.max_connections = 100, .max_connections_per_ip = 3});
  const auto t0 = ConnectionTable::Clock::now();
  BOOST_TEST(t.admit("198.51.100.1", t0) == "admitted");  // another client's, idle since t0
  SessionControl& other = *t.sessions[0];
  BOOST_TEST(t.admit("192.0.2.1", t0) == "admitted");
  BOOST_TEST(t.admit("192.0.2.1", t0) == "admitted");
  BOOST_TEST(t.admit("192.0.2.1", t0) == "admitted");
  SessionControl& mid_request = *t.sessions[1];
  SessionControl& served_first = *t.sessions[2];
  SessionControl& served_next = *t.sessions[3];
  BOOST_TEST(t.table.busy(mid_request));
  BOOST_TEST(t.table.busy(served_first));  // one request each, then idle between requests
  t.table.head_accepted(served_first);
  t.table.idle(served_first, t0 + 10ms);
  BOOST_TEST(t.table.busy(served_next));
  t.table.head_accepted(served_next);
  t.table.idle(served_next, t0 + 20ms);
  BOOST_TEST(t.admit("192.0.2.1", t0 + 30ms) == "admitted");  // young: no second of idling needed
  BOOST_TEST(!t.table.busy(served_first));                     // chosen
  t.table.remove(served_first);
  SessionControl& newcomer = *t.sessions[4];
  BOOST_TEST(t.table.busy(newcomer));
  BOOST_TEST(t.table.busy(served_next));  // its next request: none of the client's is idle now
  BOOST_TEST(t.admit("192.0.2.1", t0 + 40ms) == "per_ip_limit");
  BOOST_TEST(t.table.busy(mid_request));
  BOOST_TEST(t.table.busy(other));
}

// A connection whose request was refused on its head (404, 400, 401 before the body)
// lingers idle up to kLingerTime: it has sent a request, so it no longer counts among the
// few an address may hold that have not, once connections are scarce. It did, and eight of
// them had the address's next connection refused.
// (Their heads arriving: one waiting idle would make room for the newcomer, below.)
BOOST_AUTO_TEST_CASE(a_refused_request_counts_as_sent_for_the_cap_on_sockets_that_send_nothing) {
  Table t({.max_connections = 16, .max_connections_per_ip = 16});
  for (size_t i = 0; i < kMaxWaitingPerAddress; ++i) BOOST_TEST(t.admit_mid_request("192.0.2.1") == "admitted");
  BOOST_TEST(t.admit("192.0.2.1") == "per_ip_waiting_limit");  // half the slots taken: scarce
  SessionControl& refused = *t.sessions.front();
  t.table.request_refused(refused);
  t.table.idle(refused);  // dropping what still arrives
  BOOST_TEST(t.admit_mid_request("192.0.2.1") == "admitted");
  BOOST_TEST(t.admit("192.0.2.1") == "per_ip_waiting_limit");  // eight that sent nothing again
  BOOST_TEST(t.table.busy(refused));                            // not chosen: it has sent one
}

// Black-box attack: once half the slots were taken, an address holding eight sockets that
// had sent nothing had every next connection refused, though it had delivered, was far
// from max_connections_per_ip, and the refusal was counted as per_ip_limit (behind a proxy,
// or with sockets left open, the service's deliveries were closed unanswered). Its newcomer
// now takes the place of the one of them waiting the longest, young as it is: the address
// holds no more sockets that have sent nothing than before. Neither its keep-alive
// connection, idle longer, nor another client's is chosen; when all eight are in the middle
// of their first head the newcomer is refused, as per_ip_waiting_limit.
BOOST_AUTO_TEST_CASE(a_client_at_its_cap_on_silent_sockets_gets_in_in_place_of_the_one_waiting_the_longest) {
  using namespace std::chrono_literals;
  Table t({.max_connections = 20, .max_connections_per_ip = 20});
  const auto t0 = ConnectionTable::Clock::now();
  BOOST_TEST(t.admit("198.51.100.1", t0) == "admitted");  // another client's silent socket
  BOOST_TEST(t.admit("192.0.2.1", t0) == "admitted");
  SessionControl& other = *t.sessions[0];
  SessionControl& keep_alive = *t.sessions[1];
  BOOST_TEST(t.table.busy(keep_alive));  // one request, then idle between requests
  t.table.head_accepted(keep_alive);
  t.table.idle(keep_alive, t0 + 1ms);
  for (size_t i = 0; i < kMaxWaitingPerAddress; ++i) {
    BOOST_TEST(t.admit("192.0.2.1", t0 + 10ms + std::chrono::milliseconds(i)) == "admitted");
  }
  SessionControl& waited_longest = *t.sessions[2];
  SessionControl& waited_next = *t.sessions[3];
  BOOST_TEST(t.table.size() == 10u);  // half the slots: scarce

  BOOST_TEST(t.admit("192.0.2.1", t0 + 100ms) == "admitted");
  BOOST_TEST(!t.table.busy(waited_longest));  // chosen
  t.table.remove(waited_longest);
  BOOST_TEST(t.table.size() == 10u);  // the count never grows
  BOOST_TEST(t.admit("192.0.2.1", t0 + 110ms) == "admitted");
  BOOST_TEST(!t.table.busy(waited_next));
  t.table.remove(waited_next);
  BOOST_TEST(t.table.size() == 10u);

  // Every one that has sent nothing now has its head arriving (slowloris): refused.
  for (size_t i = 4; i < t.sessions.size(); ++i) BOOST_TEST(t.table.busy(*t.sessions[i]));
  BOOST_TEST(t.admit("192.0.2.1", t0 + 120ms) == "per_ip_waiting_limit");
  BOOST_TEST(t.table.busy(keep_alive));
  BOOST_TEST(t.table.busy(other));
}

BOOST_AUTO_TEST_CASE(the_connection_idle_the_longest_makes_room_never_one_mid_request) {
  using namespace std::chrono_literals;
  Table t({.max_connections = 3, .max_connections_per_ip = 10});
  const auto t0 = ConnectionTable::Clock::now();
  BOOST_TEST(t.admit("192.0.2.1", t0) == "admitted");
  BOOST_TEST(t.admit("192.0.2.2", t0) == "admitted");
  BOOST_TEST(t.admit("192.0.2.3", t0) == "admitted");
  SessionControl& oldest = *t.sessions[0];
  SessionControl& served = *t.sessions[1];
  SessionControl& waiting = *t.sessions[2];
  BOOST_TEST(t.table.busy(oldest));  // a request arrives, and is not done
  BOOST_TEST(t.table.busy(served));  // one request, then idle again
  t.table.idle(served, t0 + 100ms);
  BOOST_TEST(t.table.busy(waiting));  // one request at once, then idle later than `served`
  t.table.idle(waiting, t0 + 200ms);
  // None has been idle a second yet: the newcomer is refused.
  BOOST_TEST(t.admit("192.0.2.4", t0 + 1050ms) == "connection_limit");
  // `served` has been idle the longest; `oldest`, open longer, is in the middle of a request.
  BOOST_TEST(t.admit("192.0.2.4", t0 + 1150ms) == "admitted");
  BOOST_TEST(!t.table.busy(served));  // chosen: it must not start a request
  BOOST_TEST(t.table.busy(oldest));
  t.table.idle(served, t0 + 1200ms);  // an evicted connection never becomes a candidate again
  // Still four in the table until the evicted session ends: the next newcomer takes the
  // next idle one (`waiting`), then the one admitted at 1150 ms, never `oldest`.
  BOOST_TEST(t.admit("192.0.2.5", t0 + 2000ms) == "admitted");
  BOOST_TEST(!t.table.busy(waiting));
  BOOST_TEST(t.admit("192.0.2.6", t0 + 3000ms) == "admitted");
  BOOST_TEST(t.admit("192.0.2.7", t0 + 3100ms) == "admitted");  // the one admitted at 2000 ms
  BOOST_TEST(t.admit("192.0.2.8", t0 + 3200ms) == "connection_limit");  // the rest idle < 1 s
  BOOST_TEST(t.table.busy(oldest));
  t.table.remove(served);
  t.table.remove(waiting);
  BOOST_TEST(t.table.size() == 5u);
}

// Attack (stop 76): sockets from clients that never signed a delivery, reconnecting as
// soon as they are closed, took every slot that had idled a second before the service's
// next connection came: it was refused nearly always. A proven client's newcomer now
// closes one of theirs that has sent nothing, however young; an unproven newcomer does
// not, and neither the proven client's own connections nor one in the middle of a request
// are chosen.
BOOST_AUTO_TEST_CASE(a_proven_client_gets_in_past_young_idle_sockets_of_clients_never_proven) {
  using namespace std::chrono_literals;
  Table t({.max_connections = 4, .max_connections_per_ip = 10});
  const auto t0 = ConnectionTable::Clock::now();
  BOOST_TEST(t.admit("192.0.2.100", t0) == "admitted");  // the service: one delivery, then gone
  t.table.proven(*t.sessions[0], t0);
  t.table.remove(*t.sessions[0]);
  BOOST_TEST(t.admit("192.0.2.100", t0 + 1ms) == "admitted");  // its next connection, about to send
  SessionControl& service_waiting = *t.sessions[1];
  BOOST_TEST(t.admit("198.51.100.1", t0 + 10ms) == "admitted");
  SessionControl& mid_body = *t.sessions[2];
  BOOST_TEST(t.table.busy(mid_body));
  t.table.head_accepted(mid_body);
  BOOST_TEST(t.admit("198.51.100.2", t0 + 20ms) == "admitted");
  SessionControl& mid_head = *t.sessions[3];
  BOOST_TEST(t.table.busy(mid_head));  // a head arriving, not yet checked (slowloris)
  BOOST_TEST(t.admit("198.51.100.3", t0 + 30ms) == "admitted");
  SessionControl& silent = *t.sessions[4];  // sends nothing
  // Full, nothing idle a second: a newcomer not proven is refused...
  BOOST_TEST(t.admit("198.51.100.4", t0 + 500ms) == "connection_limit");
  // ... the service's is admitted in place of the silent socket...
  BOOST_TEST(t.admit("192.0.2.100", t0 + 510ms) == "admitted");
  BOOST_TEST(!t.table.busy(silent));
  t.table.remove(silent);
  // ... and then refused: the service's own connections and two mid-request are left.
  BOOST_TEST(t.admit("192.0.2.100", t0 + 520ms) == "connection_limit");
  BOOST_TEST(t.table.busy(mid_head));
  BOOST_TEST(t.table.busy(mid_body));
  // Past a second of idling the rule holds for everyone: the longest idle, the service's.
  BOOST_TEST(t.admit("198.51.100.4", t0 + 1100ms) == "admitted");
  BOOST_TEST(!t.table.busy(service_waiting));
}

// Second attack: a proven client's newcomer may close any idle connection of a client
// never proven (sockets that sent a forged delivery first were past their first head), but
// a socket that has sent nothing goes first, before a keep-alive reader idle longer.
BOOST_AUTO_TEST_CASE(a_proven_newcomer_closes_a_silent_socket_before_a_keep_alive_reader) {
  using namespace std::chrono_literals;
  Table t({.max_connections = 3, .max_connections_per_ip = 10});
  const auto t0 = ConnectionTable::Clock::now();
  BOOST_TEST(t.admit("192.0.2.100", t0) == "admitted");
  t.table.proven(*t.sessions[0], t0);
  BOOST_TEST(t.admit("198.51.100.1", t0 + 10ms) == "admitted");
  SessionControl& reader = *t.sessions[1];  // one request, then idle between requests
  BOOST_TEST(t.table.busy(reader));
  t.table.head_accepted(reader);
  t.table.idle(reader, t0 + 20ms);
  BOOST_TEST(t.admit("198.51.100.2", t0 + 30ms) == "admitted");
  SessionControl& silent = *t.sessions[2];
  BOOST_TEST(t.admit("192.0.2.100", t0 + 500ms) == "admitted");
  BOOST_TEST(!t.table.busy(silent));
  t.table.remove(silent);
  BOOST_TEST(t.admit("192.0.2.100", t0 + 510ms) == "admitted");  // then the reader
  BOOST_TEST(!t.table.busy(reader));
}

BOOST_AUTO_TEST_SUITE_END()  // connection_table_test
