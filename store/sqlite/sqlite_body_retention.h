#pragma once
// The SQLite BodyRetention (store/body_retention.h), on the store's write connection.
#include <memory>

#include "common/result.h"
#include "store/body_retention.h"
#include "store/sqlite/connection.h"

namespace hh::store {

Result<std::unique_ptr<BodyRetention>> open_sqlite_body_retention(sqlite::Connection& write_db);

}  // namespace hh::store
