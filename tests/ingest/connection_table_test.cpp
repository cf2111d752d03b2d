// The listener's connection table (receiver/http/connection_table.h) with made-up client
// addresses, which a loopback test cannot have: IPv6 clients are counted per /64, an
// IPv4-mapped IPv6 address as its IPv4 address.
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
  std::string admit(const std::string& address) {
    auto control = std::make_shared<SessionControl>(io.get_executor());
    const auto refused = table.admit(control, net::ip::make_address(address));
    if (refused) return std::string(refusal_name(*refused));
    sessions.push_back(control);
    return "admitted";
  }
  net::io_context io;
  ConnectionTable table;
  std::vector<std::shared_ptr<SessionControl>> sessions;
};

}  // namespace

BOOST_AUTO_TEST_CASE(ipv6_clients_in_one_64_share_the_per_address_cap) {
  Table t({.max_connections = 100, .max_connections_per_ip = 2});
  BOOST_TEST(t.admit("2001:db8:1:2::1") == "admitted");
  BOOST_TEST(t.admit("2001:db8:1:2:ffff:ffff:ffff:ffff") == "admitted");
  BOOST_TEST(t.admit("2001:db8:1:2::3") == "per_ip_limit");  // a third from the same /64
  BOOST_TEST(t.admit("2001:db8:1:3::1") == "admitted");      // the next /64
  BOOST_TEST(t.admit("2001:db8:1:3::1") == "admitted");
  BOOST_TEST(t.admit("2001:db8:1:3::2") == "per_ip_limit");
  // A connection that ends gives its group's place back.
  t.table.remove(*t.sessions.front());
  BOOST_TEST(t.admit("2001:db8:1:2::4") == "admitted");
}

BOOST_AUTO_TEST_CASE(an_ipv4_mapped_address_counts_as_its_ipv4_address) {
  Table t({.max_connections = 100, .max_connections_per_ip = 2});
  BOOST_TEST(t.admit("192.0.2.1") == "admitted");
  BOOST_TEST(t.admit("::ffff:192.0.2.1") == "admitted");
  BOOST_TEST(t.admit("192.0.2.1") == "per_ip_limit");
  BOOST_TEST(t.admit("::ffff:192.0.2.1") == "per_ip_limit");
  // Other IPv4 addresses are other clients, though as IPv6 they share one /64.
  BOOST_TEST(t.admit("::ffff:192.0.2.2") == "admitted");
  BOOST_TEST(t.admit("::ffff:192.0.2.3") == "admitted");
  BOOST_TEST(t.admit("192.0.2.2") == "admitted");
  BOOST_TEST(t.admit("192.0.2.2") == "per_ip_limit");
}

BOOST_AUTO_TEST_SUITE_END()  // connection_table_test
