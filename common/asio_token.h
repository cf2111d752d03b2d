#pragma once
// The completion token of every awaited Asio/Beast operation: an error comes back as a value
// in a tuple (no exception on the hot path). Boost 1.81 spells it as_tuple(use_awaitable); the
// bare `as_tuple` of newer Boost examples does not exist yet (style.md).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace hh {

inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace hh
