// What frames a request on the wire and what does not (RFC 9112), against the real `serve`
// over 127.0.0.1: a chunked body's trailer fields are never framing, and empty lines before
// a request line are skipped, however many, within the head's limit. Each case reproduces
// a black-box finding.
#include <boost/test/unit_test.hpp>
#include <cstdio>

#include "tests/ingest/hostile_requests.h"
#include "tests/support/database_probe.h"
#include "tests/support/http_client.h"
#include "tests/support/raw_connection.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(request_framing_test)

using namespace hh::test;
using namespace std::chrono_literals;
namespace hostile = hh::test::hostile;

namespace {

// A delivery signed with `secret`, its body in one chunk, then `trailer` (field lines, each
// with its CRLF) and the empty line that ends the body.
std::string chunked_delivery(const std::string& secret, const std::string& id, const std::string& trailer,
                             const std::string& connection = "keep-alive") {
  const std::string& body = hostile::kBody;
  std::string request = "POST /webhooks HTTP/1.1\r\nHost: x\r\nConnection: " + connection +
                        "\r\nTransfer-Encoding: chunked\r\n";
  for (const auto& [name, value] : signature_headers(secret, id, now_seconds(), body)) request += name + ": " + value + "\r\n";
  char size[16];
  std::snprintf(size, sizeof size, "%zx", body.size());
  return request + "\r\n" + size + "\r\n" + body + "\r\n0\r\n" + trailer + "\r\n";
}

}  // namespace

// A signed chunked delivery whose trailer named Content-Length or Transfer-Encoding (or
// held a Connection value Beast cannot list) was refused 400 "malformed request body: bad
// Content-Length": Beast 1.81 took the trailer field for the message's framing. Trailer
// fields are ignored: such a delivery is stored, the next request on the connection is read
// as it was sent, and the trailer reaches neither the stored headers nor the signature.
BOOST_AUTO_TEST_CASE(a_trailer_field_is_never_framing) {
  TempDir dir;
  ServerProcess server(dir);
  int n = 0;
  for (const std::string trailer : {"Content-Length: 5\r\n", "Content-Length: 0\r\nX-After: 1\r\n",
                                    "Transfer-Encoding: chunked\r\n", "Transfer-Encoding: gzip\r\n",
                                    "Connection: a b\r\n", "X-Folded: 1\r\n  more of it\r\n"}) {
    BOOST_TEST_CONTEXT(trailer) {
      const std::string id = "msg_trailer_" + std::to_string(++n);
      // Keep-alive, a second delivery right behind the first, in the same send.
      RawConnection connection(server.port());
      BOOST_TEST(connection.send(chunked_delivery(server.secret(), id, trailer) +
                                 hostile::signed_request(server.secret(), id + "_next")));
      const std::string first = connection.receive_response(5s);
      BOOST_TEST(first.starts_with("HTTP/1.1 200"), first);
      const std::string second = connection.receive_response(5s);
      BOOST_TEST(second.starts_with("HTTP/1.1 200"), second);
      BOOST_TEST(hostile::deliveries(server.database(), "message_id = '" + id + "'") == 1);
      BOOST_TEST(hostile::deliveries(server.database(), "message_id = '" + id + "_next'") == 1);
      const std::string stored = query_text(server.database(), "SELECT headers FROM inbox WHERE message_id = '" + id + "'");
      BOOST_TEST(stored.find("Transfer-Encoding\":\"chunked\"") != std::string::npos, stored);  // the head's own
      BOOST_TEST(stored.find("Content-Length") == std::string::npos, stored);
      BOOST_TEST(stored.find("gzip") == std::string::npos, stored);
    }
  }
  BOOST_TEST(server.stop() == 0);
}

// A trailer line the head would refuse is refused as a head's is (400, closed): a field
// name that is not a token (a space in it, or before its colon: RFC 9112 §5.1), a line
// without a colon, a control character in a value. Decided so that a trailer is held to
// no other rules than a head, never fewer.
BOOST_AUTO_TEST_CASE(a_malformed_trailer_line_is_400_as_in_the_head) {
  TempDir dir;
  ServerProcess server(dir);
  for (const std::string field : {"X Foo: 1", "Content-Length : 5", "NoColon", " X-Starts-Folded: 1", "X-Nul: a\x01z"}) {
    BOOST_TEST_CONTEXT(field) {
      // In the head (its first field, as in the trailer below): Beast refuses it.
      const RawReply in_head =
          raw_exchange(server.port(), "GET /healthz HTTP/1.1\r\n" + field + "\r\nHost: x\r\n\r\n", 5s);
      BOOST_TEST(in_head.starts_with("HTTP/1.1 400"), in_head.received);
      // In the trailer: so does the session.
      const RawReply in_trailer = raw_exchange(server.port(), chunked_delivery(server.secret(), "msg_bad", field + "\r\n"), 5s);
      BOOST_TEST(in_trailer.starts_with("HTTP/1.1 400"), in_trailer.received);
      BOOST_TEST(in_trailer.received.find("malformed request body: ") != std::string::npos, in_trailer.received);
      BOOST_TEST(in_trailer.closed_by_server);
    }
  }
  BOOST_TEST(hostile::deliveries(server.database()) == 0);
  BOOST_TEST(server.stop() == 0);
}

// A request refused at its head is answered before any route is known, so the answer
// carries the strictest browser policy itself: on a console path it was the one answer
// without the console's Content-Security-Policy and nosniff (black-box pass, stop 82).
BOOST_AUTO_TEST_CASE(a_refusal_at_the_head_carries_a_strict_browser_policy) {
  TempDir dir;
  ServerProcess server(dir);
  for (const std::string& head : std::vector<std::string>{"GET /console/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
                                 "GET /console/ HTTP/1.1\r\nX Bad: 1\r\nHost: x\r\n\r\n",
                                 "GET /console/ HTTP/1.1\r\nX-Big: " + std::string(70000, 'a') + "\r\n\r\n"}) {
    const RawReply reply = raw_exchange(server.port(), head, 5s);
    BOOST_TEST_CONTEXT(reply.received.substr(0, 40)) {
      BOOST_TEST((reply.starts_with("HTTP/1.1 400") || reply.starts_with("HTTP/1.1 431")));
      BOOST_TEST(reply.received.find("Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n") !=
                 std::string::npos);
      BOOST_TEST(reply.received.find("X-Content-Type-Options: nosniff\r\n") != std::string::npos);
      BOOST_TEST(reply.received.find("X-Frame-Options: DENY\r\n") != std::string::npos);
    }
  }
  BOOST_TEST(server.stop() == 0);
}

// RFC 9112 §2.2: empty lines before a request line are ignored. Only one was: "\r\n\r\n"
// then a request line got 400 "bad method", and on a keep-alive connection a second
// delivery after a stray CRLF pair was lost to a 400. Any number is skipped now, counted as
// part of the head they precede: more than max_header_bytes of them is 431, so a client
// sending only empty lines is still cut off (as at the head's deadline, which they do not
// extend: hostile_clients_test).
BOOST_AUTO_TEST_CASE(empty_lines_before_a_request_line_are_skipped_within_the_head_limit) {
  TempDir dir;
  ServerProcess server(dir, "max_header_bytes = 4096\n");
  const RawReply after_three =
      raw_exchange(server.port(), "\r\n\r\n\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5s);
  BOOST_TEST(after_three.starts_with("HTTP/1.1 200"), after_three.received);

  RawConnection connection(server.port());
  BOOST_TEST(connection.send(hostile::signed_request(server.secret(), "msg_before_crlfs") + "\r\n\r\n" +
                             hostile::signed_request(server.secret(), "msg_after_crlfs")));
  const std::string first = connection.receive_response(5s);
  BOOST_TEST(first.starts_with("HTTP/1.1 200"), first);
  const std::string second = connection.receive_response(5s);
  BOOST_TEST(second.starts_with("HTTP/1.1 200"), second);
  BOOST_TEST(hostile::deliveries(server.database(), "message_id = 'msg_after_crlfs'") == 1);
  // Empty lines in reads of their own, then the request.
  for (int i = 0; i < 3; ++i) BOOST_TEST(connection.send("\r\n"));
  BOOST_TEST(connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string third = connection.receive_response(5s);
  BOOST_TEST(third.starts_with("HTTP/1.1 200"), third);

  // 2,000 bytes of empty lines fit beside a short head...
  std::string crlfs;
  for (int i = 0; i < 1000; ++i) crlfs += "\r\n";
  const RawReply within = raw_exchange(server.port(), crlfs + "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5s);
  BOOST_TEST(within.starts_with("HTTP/1.1 200"), within.received);
  // ...not beside a head of 2,500: together they pass max_header_bytes.
  const std::string padded_head =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: " + std::string(2450, 'p') + "\r\n\r\n";
  BOOST_TEST(raw_exchange(server.port(), padded_head, 5s).starts_with("HTTP/1.1 200"));
  const RawReply together = raw_exchange(server.port(), crlfs + padded_head, 5s);
  BOOST_TEST(together.starts_with("HTTP/1.1 431"), together.received);
  // Nothing but empty lines, more than the head may hold: 431, closed.
  const RawReply flood = raw_exchange(server.port(), crlfs + crlfs + crlfs, 5s);
  BOOST_TEST(flood.starts_with("HTTP/1.1 431"), flood.received);
  BOOST_TEST(flood.closed_by_server);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // request_framing_test
