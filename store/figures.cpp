// open_figures: the backend that `database = …` names.
#include "store/figures.h"

#include "store/database_location.h"
#include "store/postgres/read/pg_read_store.h"
#include "store/sqlite/sqlite_figures.h"

namespace hh::store {

Result<std::unique_ptr<StoreFigures>> open_figures(const Database& database) {
  return open_backend<StoreFigures>(database, open_sqlite_figures, open_postgres_figures);
}

}  // namespace hh::store
