// Connection slots against the real `serve` over 127.0.0.1 (spec §2): when every slot is
// taken, the connection idle the longest between requests makes room for a new one,
// whatever it did before, and one in the middle of a request never does. Addresses
// 127.0.9.x and 127.0.10.x are this module's (Linux routes all of 127/8 to lo).
#include <boost/test/unit_test.hpp>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "tests/ingest/hostile_requests.h"
#include "tests/support/raw_connection.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(hostile_slots_test)

using namespace hh::test;
using namespace std::chrono_literals;
namespace hostile = hh::test::hostile;

namespace {

// A connection makes room only after it has been idle a second (kMinIdleBeforeEviction,
// receiver/http/connection_table.h); the tests let their idle connections wait longer.
constexpr auto kPastMinIdle = 1500ms;

const std::string kHealthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

}  // namespace

// 64 keep-alive connections from four addresses, each after one GET /healthz, held every
// slot: only connections that had never made a request could make room, so a fifth
// address's signed delivery was closed without an answer.
BOOST_AUTO_TEST_CASE(idle_keep_alive_connections_make_room_for_a_new_client) {
  TempDir dir;
  ServerProcess server(dir, "max_connections = 64\nrefusal_log_interval_s = 1");
  std::vector<RawConnection> idle;
  for (int i = 0; i < 64; ++i) {
    idle.emplace_back(server.port(), "127.0.9." + std::to_string(1 + i / 16));
    BOOST_TEST_REQUIRE(idle.back().send(kHealthz));
    BOOST_TEST_REQUIRE(idle.back().receive_response(5s).starts_with("HTTP/1.1 200"));
  }
  std::this_thread::sleep_for(kPastMinIdle);
  RawConnection service(server.port(), "127.0.9.5");
  BOOST_TEST(service.send(hostile::signed_request(server.secret(), "msg_fifth_address")));
  const std::string answer = service.receive_response(5s);
  BOOST_TEST(answer.starts_with("HTTP/1.1 200"), "answer: " << answer.substr(0, 40));
  BOOST_TEST(idle.front().closed_by_server(2s));  // idle the longest
  BOOST_TEST(!idle.back().closed_by_server(100ms));
  BOOST_TEST(server.wait_for_log("\"evicted_idle\":1", 5s));
  BOOST_TEST(server.stop() == 0);
}

// Every slot taken; the two connections that have been open the longest are in the middle
// of a request (one has sent half its head, the other its head and half its body), the
// other two idle after a request. A newcomer takes the place of the idle one that waited
// longest; the two mid-request connections finish their deliveries.
BOOST_AUTO_TEST_CASE(a_connection_in_the_middle_of_a_request_is_never_closed_to_make_room) {
  TempDir dir;
  ServerProcess server(dir, "max_connections = 4");
  const std::string slow_head_request = hostile::signed_request(server.secret(), "msg_slow_head");
  const std::string slow_body_request = hostile::signed_request(server.secret(), "msg_slow_body");
  const size_t head_part = slow_head_request.find("\r\n") + 2;  // the request line
  const size_t body_part = slow_body_request.size() - hostile::kBody.size() / 2;
  RawConnection slow_head(server.port(), "127.0.10.1");
  BOOST_TEST_REQUIRE(slow_head.send(slow_head_request.substr(0, head_part)));
  RawConnection slow_body(server.port(), "127.0.10.2");
  BOOST_TEST_REQUIRE(slow_body.send(slow_body_request.substr(0, body_part)));
  std::vector<RawConnection> idle;
  for (const std::string address : {"127.0.10.3", "127.0.10.4"}) {
    idle.emplace_back(server.port(), address);
    BOOST_TEST_REQUIRE(idle.back().send(kHealthz));
    BOOST_TEST_REQUIRE(idle.back().receive_response(5s).starts_with("HTTP/1.1 200"));
  }
  std::this_thread::sleep_for(kPastMinIdle);

  RawConnection newcomer(server.port(), "127.0.10.5");
  BOOST_TEST(newcomer.send(hostile::signed_request(server.secret(), "msg_newcomer")));
  BOOST_TEST(newcomer.receive_response(5s).starts_with("HTTP/1.1 200"));
  BOOST_TEST(idle.front().closed_by_server(2s));
  BOOST_TEST(!idle.back().closed_by_server(100ms));
  BOOST_TEST(!slow_head.closed_by_server(100ms));
  BOOST_TEST(!slow_body.closed_by_server(100ms));

  BOOST_TEST(slow_head.send(slow_head_request.substr(head_part)));
  BOOST_TEST(slow_head.receive_response(5s).starts_with("HTTP/1.1 200"));
  BOOST_TEST(slow_body.send(slow_body_request.substr(body_part)));
  BOOST_TEST(slow_body.receive_response(5s).starts_with("HTTP/1.1 200"));
  BOOST_TEST(hostile::deliveries(server.database()) == 3);
  BOOST_TEST(server.stop() == 0);
}

// Attack (stop 76): sockets that reconnect as soon as they are closed, a few more than
// max_connections from several addresses, took each slot the moment it had idled a second:
// the service's next connection was refused nearly every time (2 of 100 got in, in the
// attack's run). Once its address has carried a signed delivery, its connections get in in
// place of theirs: sockets that send nothing, and (second attack) sockets that send a
// forged delivery at once (past their first head they no longer counted as never having
// sent a request) or several back to back (each held its slot through its 401's wait).
BOOST_AUTO_TEST_CASE(sockets_that_reconnect_at_once_do_not_keep_the_service_out) {
  for (const int forged : {0, 1, 4}) {  // forged deliveries each socket sends as it connects
    BOOST_TEST_CONTEXT("forged deliveries per socket: " << forged) {
      TempDir dir;
      ServerProcess server(dir, "max_connections = 16\nrefusal_log_interval_s = 1");
      const std::string service = "127.0.9.100";
      {
        RawConnection first(server.port(), service);
        BOOST_TEST_REQUIRE(first.send(hostile::signed_request(server.secret(), "msg_proving")));
        BOOST_TEST_REQUIRE(first.receive_response(5s).starts_with("HTTP/1.1 200"));
      }
      std::string forgeries;
      for (int i = 0; i < forged; ++i) forgeries += hostile::signed_request(random_secret(), "msg_forged");
      std::atomic<bool> attacking{true};
      std::atomic<int> reconnects{0};
      std::thread attacker([&] {
        std::vector<std::optional<RawConnection>> sockets(20);  // 5 from each of 4 addresses
        const auto connect = [&](size_t i) {
          sockets[i].emplace(server.port(), "127.0.9." + std::to_string(31 + i % 4));
          if (!forgeries.empty()) sockets[i]->send(forgeries, 1s);
        };
        for (size_t i = 0; i < sockets.size(); ++i) connect(i);
        while (attacking) {
          for (size_t i = 0; i < sockets.size(); ++i) {
            if (!sockets[i]->closed_by_server(0ms)) continue;
            connect(i);
            ++reconnects;
          }
          std::this_thread::sleep_for(1ms);
        }
      });
      BOOST_TEST(server.wait_for_log("\"evicted_idle\"", 10s));  // the table is full and turning over
      int answered = 0;
      constexpr int kDeliveries = 20;
      for (int i = 0; i < kDeliveries; ++i) {
        RawConnection next(server.port(), service);
        if (next.send(hostile::signed_request(server.secret(), "msg_during_" + std::to_string(i))) &&
            next.receive_response(5s).starts_with("HTTP/1.1 200")) {
          ++answered;
        }
        std::this_thread::sleep_for(50ms);
      }
      attacking = false;
      attacker.join();
      BOOST_TEST(answered == kDeliveries);
      BOOST_TEST(reconnects.load() > kDeliveries);  // the attack ran throughout
      BOOST_TEST(server.stop() == 0);
    }
  }
}

// Black-box attack: an address at max_connections_per_ip was refused even though its
// connections sat idle between requests and it had delivered before: eight keep-alive
// connections that had each made a request locked out its next delivery (the cap at
// max_connections, as behind a proxy, where every client has the proxy's address). Its own
// connection idle the longest now makes room, however young.
BOOST_AUTO_TEST_CASE(an_address_at_its_cap_gets_in_in_place_of_its_own_idle_connection) {
  TempDir dir;
  ServerProcess server(dir, "max_connections = 8\nmax_connections_per_ip = 8");
  const std::string address = "127.0.11.1";
  {
    RawConnection first(server.port(), address);
    BOOST_TEST_REQUIRE(first.send(hostile::signed_request(server.secret(), "msg_proving")));
    BOOST_TEST_REQUIRE(first.receive_response(5s).starts_with("HTTP/1.1 200"));
  }
  std::vector<RawConnection> idle;
  for (int i = 0; i < 8; ++i) {
    idle.emplace_back(server.port(), address);
    BOOST_TEST_REQUIRE(idle.back().send(kHealthz));
    BOOST_TEST_REQUIRE(idle.back().receive_response(5s).starts_with("HTTP/1.1 200"));
  }
  RawConnection next(server.port(), address);
  BOOST_TEST(next.send(hostile::signed_request(server.secret(), "msg_at_the_cap")));
  const std::string answer = next.receive_response(5s);
  BOOST_TEST(answer.starts_with("HTTP/1.1 200"), "answer: " << answer.substr(0, 40));
  BOOST_TEST(idle.front().closed_by_server(2s));  // idle the longest
  BOOST_TEST(!idle.back().closed_by_server(100ms));
  BOOST_TEST(hostile::deliveries(server.database()) == 2);
  BOOST_TEST(server.stop() == 0);
}

// Black-box attack: with max_connections_per_ip at max_connections (as behind a proxy), an
// address that had delivered, then held a few sockets that sent nothing, had its next
// signed delivery closed unanswered once half the slots were taken (at eight of them,
// kMaxWaitingPerAddress), and the refusal counted as per_ip_limit, a cap it was far from.
// Its newcomer now takes the place of its socket waiting the longest; only when all eight
// are in the middle of their first head is it refused, counted as per_ip_waiting_limit.
BOOST_AUTO_TEST_CASE(an_address_holding_silent_sockets_still_gets_its_deliveries_in) {
  TempDir dir;
  ServerProcess server(dir, "max_connections = 20\nmax_connections_per_ip = 20\nrefusal_log_interval_s = 1");
  const std::string address = "127.0.12.1";
  {
    RawConnection first(server.port(), address);
    BOOST_TEST_REQUIRE(first.send(hostile::signed_request(server.secret(), "msg_proving")));
    BOOST_TEST_REQUIRE(first.receive_response(5s).starts_with("HTTP/1.1 200"));
  }
  std::vector<RawConnection> silent;  // half the slots: scarce
  for (int i = 0; i < 10; ++i) silent.emplace_back(server.port(), address);
  std::this_thread::sleep_for(200ms);  // accepted and registered
  for (int i = 0; i < 4; ++i) {
    RawConnection next(server.port(), address);
    BOOST_TEST(next.send(hostile::signed_request(server.secret(), "msg_past_silent_" + std::to_string(i))));
    const std::string answer = next.receive_response(5s);
    BOOST_TEST(answer.starts_with("HTTP/1.1 200"), "answer: " << answer.substr(0, 40));
  }
  BOOST_TEST(silent.front().closed_by_server(2s));  // waiting the longest
  BOOST_TEST(!silent.back().closed_by_server(100ms));
  BOOST_TEST(hostile::deliveries(server.database()) == 5);

  // Two keep-alive connections between requests and eight in the middle of their first
  // head, all of the address: its next one is refused, and counted as what it is.
  silent.clear();
  std::this_thread::sleep_for(200ms);  // their sessions ended
  std::vector<RawConnection> keep_alive;
  for (int i = 0; i < 2; ++i) {
    keep_alive.emplace_back(server.port(), address);
    BOOST_TEST_REQUIRE(keep_alive.back().send(kHealthz));
    BOOST_TEST_REQUIRE(keep_alive.back().receive_response(5s).starts_with("HTTP/1.1 200"));
  }
  std::vector<RawConnection> slow_heads;
  for (int i = 0; i < 8; ++i) {
    slow_heads.emplace_back(server.port(), address);
    BOOST_TEST_REQUIRE(slow_heads.back().send("POST /webhooks HTTP/1.1\r\n"));
  }
  std::this_thread::sleep_for(200ms);  // accepted, registered, each one's head begun
  RawConnection refused(server.port(), address);
  BOOST_TEST(refused.closed_by_server(2s));
  BOOST_TEST(server.wait_for_log("\"per_ip_waiting_limit\":1", 5s));
  BOOST_TEST(!keep_alive.front().closed_by_server(100ms));  // not one that has sent nothing
  BOOST_TEST(hostile::lines_containing(server, "per_ip_limit") == 0u);
  BOOST_TEST(server.stop() == 0);
}

// Listening on [::] (dual stack), IPv4 clients arrive as IPv4-mapped IPv6 addresses
// (::ffff:a.b.c.d): each counts as its IPv4 address, not as one /64 shared by all of IPv4.
BOOST_AUTO_TEST_CASE(ipv4_clients_of_a_dual_stack_listener_are_capped_per_ipv4_address) {
  TempDir dir;
  ServerProcess server(dir, "max_connections_per_ip = 2", 20s, {"HEALTHHOOK_LISTEN=[::]:0"});
  std::vector<RawConnection> held;  // in the middle of a request (an idle one would make room)
  for (int i = 0; i < 2; ++i) {
    held.emplace_back(server.port(), "127.0.9.21");
    BOOST_TEST_REQUIRE(held.back().send("POST /webhooks HTTP/1.1\r\n"));
  }
  std::this_thread::sleep_for(200ms);  // accepted, registered, the request begun
  RawConnection third(server.port(), "127.0.9.21");
  BOOST_TEST(third.closed_by_server(2s));
  RawConnection other_address(server.port(), "127.0.9.22");
  BOOST_TEST(other_address.send(hostile::signed_request(server.secret(), "msg_other_ipv4")));
  BOOST_TEST(other_address.receive_response(5s).starts_with("HTTP/1.1 200"));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // hostile_slots_test
