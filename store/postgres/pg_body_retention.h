#pragma once
// The PostgreSQL BodyRetention (store/body_retention.h), on the store's writer connection.
// Instances sharing the store may all run it: one batch at a time across them (an
// advisory lock; an instance that finds it taken removes nothing this time). Bodies are
// hashed in the server (sha256(), built in since PostgreSQL 11: no extension), so they
// never travel to the instance. Freed space is the server's business (autovacuum).
#include <cstdint>
#include <memory>

#include "common/result.h"
#include "store/body_retention.h"
#include "store/postgres/connection.h"

namespace hh::store {

Result<std::unique_ptr<BodyRetention>> open_postgres_body_retention(pg::Connection& write_db);

}  // namespace hh::store
