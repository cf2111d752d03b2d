// open_figures: the backend that `database = …` names.
#include "store/figures.h"

#include "store/database_location.h"
#include "store/sqlite/sqlite_figures.h"

namespace hh::store {

Result<std::unique_ptr<StoreFigures>> open_figures(const Database& database) {
  return open_backend<StoreFigures>(database, open_sqlite_figures, not_built_for_postgres<StoreFigures>);
}

}  // namespace hh::store
