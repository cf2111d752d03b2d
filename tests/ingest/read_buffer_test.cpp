// Guards a measured performance fact: Beast's flat_buffer reads what little capacity it has
// left per read_some (512 bytes when empty), which made 20 KiB bodies several times
// slower. Before a body is read, the connection's buffer is made to read up to 64 KiB at
// a time; while idle it holds only kHeadReadBytes.
#include <boost/beast/core/read_size.hpp>
#include <boost/test/unit_test.hpp>

#include "receiver/http/session.h"

BOOST_AUTO_TEST_SUITE(read_buffer_test)

BOOST_AUTO_TEST_CASE(a_body_is_read_64_kib_at_a_time) {
  boost::beast::flat_buffer buffer;
  buffer.commit(boost::asio::buffer_copy(buffer.prepare(hh::http::kHeadReadBytes), boost::asio::buffer("POST / ...")));
  hh::http::prepare_for_body(buffer);
  BOOST_TEST(buffer.capacity() >= 64u * 1024u);
  // What Beast's HTTP read loop asks the socket for on the next read_some.
  BOOST_TEST(boost::beast::read_size(buffer, 65536) >= 60u * 1024u);
  boost::beast::flat_buffer unreserved;
  BOOST_TEST(boost::beast::read_size(unreserved, 65536) == 512u);  // the default we avoid
}

BOOST_AUTO_TEST_SUITE_END()  // read_buffer_test
