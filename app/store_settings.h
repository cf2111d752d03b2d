#pragma once
// The store settings of a configuration (synchronous, cache size, busy timeout, size cap),
// for every command that opens a store.
#include "config/settings.h"
#include "store/store_options.h"

namespace hh::app {

store::StoreOptions store_options(const config::Settings& settings);

// `serve`'s: the store options plus the [[forward]] rules, so the inbox and the processor
// write outbox entries. Only `serve` forwards: a rebuild re-derives rows the backend
// already has, and an offline replay has no sender running.
store::StoreOptions serve_store_options(const config::Settings& settings);

}  // namespace hh::app
