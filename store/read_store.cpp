// open_read_store: the backend that `database = …` names.
#include "store/read_store.h"

#include "store/database_location.h"
#include "store/sqlite/sqlite_read_store.h"

namespace hh::store {

Result<std::unique_ptr<ReadStore>> open_read_store(const std::string& database) {
  auto kind = database_kind(database);
  if (!kind) return fail(kind.error());
  switch (*kind) {
    case DatabaseKind::sqlite_file: return open_sqlite_read_store(database);
    case DatabaseKind::postgresql: break;
  }
  return no_backend(*kind);
}

}  // namespace hh::store
