// Guards a measured performance fact: Beast's flat_buffer at its default size reads 512
// bytes per read_some, which made 20 KiB bodies 4-8x slower. Each connection's buffer is
// reserved so one read can take up to 64 KiB.
#include <boost/beast/core/read_size.hpp>
#include <boost/test/unit_test.hpp>

#include "receiver/http/session.h"

BOOST_AUTO_TEST_CASE(connection_buffer_reads_64_kib_at_a_time) {
  auto buffer = hh::http::make_read_buffer();
  BOOST_TEST(buffer.capacity() >= 64u * 1024u);
  // What Beast's HTTP read loop asks the socket for on the first read_some.
  BOOST_TEST(boost::beast::read_size(buffer, 65536) >= 64u * 1024u);
  boost::beast::flat_buffer unreserved;
  BOOST_TEST(boost::beast::read_size(unreserved, 65536) == 512u);  // the default we avoid
}
