#pragma once
// The value of a store call a test cannot go on without (Boost.Test REQUIRE on failure,
// with the error). Shared by the twin stores (tests/postgres/twin_stores.h) and the store
// of either backend (tests/support/backend_store.h).
#include <boost/test/unit_test.hpp>

#include <utility>

#include "common/result.h"

namespace hh::test {

template <typename T>
T twin_must(Result<T> result) {
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  return std::move(result.value());
}
inline void twin_must(Result<void> result) { BOOST_REQUIRE_MESSAGE(result.ok(), result.error()); }

}  // namespace hh::test
