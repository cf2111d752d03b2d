// open_figures: the backend that `database = …` names.
#include "store/figures.h"

#include "store/database_location.h"
#include "store/sqlite/sqlite_figures.h"

namespace hh::store {

Result<std::unique_ptr<StoreFigures>> open_figures(const std::string& database) {
  auto kind = database_kind(database);
  if (!kind) return fail(kind.error());
  switch (*kind) {
    case DatabaseKind::sqlite_file: return open_sqlite_figures(database);
    case DatabaseKind::postgresql: break;
  }
  return no_backend(*kind);
}

}  // namespace hh::store
