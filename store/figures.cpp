// open_figures: the backend that `database = …` names.
#include "store/figures.h"

#include "store/database_location.h"
#include "store/sqlite/sqlite_figures.h"

namespace hh::store {

Result<std::unique_ptr<StoreFigures>> open_figures(const std::string& database) {
  return open_backend<StoreFigures>(database, open_sqlite_figures);
}

}  // namespace hh::store
