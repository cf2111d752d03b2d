// open_read_store: the backend that `database = …` names.
#include "store/read_store.h"

#include "store/database_location.h"
#include "store/postgres/read/pg_read_store.h"
#include "store/sqlite/sqlite_read_store.h"

namespace hh::store {

Result<std::unique_ptr<ReadStore>> open_read_store(const Database& database) {
  return open_backend<ReadStore>(database, open_sqlite_read_store, open_postgres_read_store);
}

}  // namespace hh::store
