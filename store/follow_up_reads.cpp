// open_follow_up_reads: the backend that `database = …` names.
#include "store/follow_up_reads.h"

#include "store/database_location.h"
#include "store/postgres/read/pg_read_store.h"
#include "store/sqlite/sqlite_follow_up_reads.h"

namespace hh::store {

Result<std::unique_ptr<FollowUpReads>> open_follow_up_reads(const Database& database) {
  return open_backend<FollowUpReads>(database, open_sqlite_follow_up_reads, open_postgres_follow_up_reads);
}

}  // namespace hh::store
