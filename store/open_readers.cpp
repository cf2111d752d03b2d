// The read side's factories (store/open_readers.h): the backend that `database = …` names.
#include "store/open_readers.h"

#include "store/postgres/copy_progress.h"
#include "store/postgres/database.h"
#include "store/postgres/read/pg_read_store.h"
#include "store/sqlite/database.h"
#include "store/sqlite/sqlite_figures.h"
#include "store/sqlite/sqlite_follow_up_reads.h"
#include "store/sqlite/sqlite_read_store.h"

namespace hh::store {

Result<std::unique_ptr<ReadStore>> open_read_store(const Database& database) {
  return open_backend<ReadStore>(database, open_sqlite_read_store, open_postgres_read_store);
}

Result<std::unique_ptr<StoreFigures>> open_figures(const Database& database) {
  return open_backend<StoreFigures>(database, open_sqlite_figures, open_postgres_figures);
}

Result<std::unique_ptr<FollowUpReads>> open_follow_up_reads(const Database& database) {
  return open_backend<FollowUpReads>(database, open_sqlite_follow_up_reads, open_postgres_follow_up_reads);
}

Result<void> check_sqlite_store_file(const std::string& path) { return check_store_file(path); }

Result<void> check_sqlite_store_path(const std::string& path) { return check_store_path_kind(path); }

Result<void> check_postgres_store(const Database& database) {
  auto db = connect(database);
  if (!db) return fail(db);
  // A check does not wait on another session's lock for ever (a migration, say).
  if (auto set = db->exec("SET statement_timeout = 10000"); !set) return fail(set);
  // What serve's migrate() would refuse, checked without applying anything.
  auto state = schema_state(*db);
  if (!state) return fail(state);
  if (auto openable = may_open(*state); !openable) return openable;
  // What serve refuses after migrating (store/postgres/copy_progress.h).
  if (auto whole = refuse_unfinished_copy(*db, database); !whole) return whole;
  return {};
}

std::string stored_team_of(const Database& database, std::string_view user_id) {
  auto reader = open_read_store(database);
  if (!reader) return {};
  RecordQuery<StoredUser>& users = (*reader)->users();
  RecordFilter filter;
  filter.user_id = std::string(user_id);
  if (!users.start(filter)) return {};
  std::string team;
  StoredUser user;
  auto found = users.next(user);
  if (found && *found && user.team_id) team = std::string(*user.team_id);
  users.finish();
  return team;
}

}  // namespace hh::store
