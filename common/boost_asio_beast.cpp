// Asio's and Beast's non-template code, compiled once for the whole program instead of
// inline in every source that includes them (BOOST_ASIO_SEPARATE_COMPILATION and
// BOOST_BEAST_SEPARATE_COMPILATION, set for every target in cmake/HealthhookTarget.cmake).
// Nothing of ours lives here.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
