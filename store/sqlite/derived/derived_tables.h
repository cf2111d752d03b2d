#pragma once
// Which tables are derived from the inbox (002-derived.sql, 005-identity.sql) and can be re-created by
// replaying it. Not derived: deliveries and processor_state (001), jobs (003, operational
// state the fetcher owns).
#include <span>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

// Every derived table, children before the tables they refer to (samples before series).
std::span<const std::string_view> derived_tables();

// Deletes every row of every derived table, on the caller's transaction.
Result<void> clear_derived_tables(sqlite::Connection& db);

}  // namespace hh::store
