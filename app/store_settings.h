#pragma once
// The store settings of a configuration (synchronous, cache size, busy timeout, size cap),
// for every command that opens a store.
#include "config/settings.h"
#include "store/store_options.h"

namespace hh::app {

store::StoreOptions store_options(const config::Settings& settings);

}  // namespace hh::app
