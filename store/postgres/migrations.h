#pragma once
// The PostgreSQL schema's migrations (store/postgres/migrations/*.sql), in order: migration
// i (0-based) is version i + 1 in the schema_migrations table.
#include <vector>

#include "store/migration.h"

namespace hh::store {

const std::vector<Migration>& postgres_migrations();

}  // namespace hh::store
