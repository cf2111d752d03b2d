#pragma once
// The PostgreSQL Erasure (store/erasure.h): `healthhook purge-user` on a connection of its
// own beside running instances. The same tables and report as SQLite's
// (store/erasure_plan.h), all in one transaction: PostgreSQL can hold many tables' row
// locks at once without stopping other writers, so there is no half-done purge to resume.
// Refused (ErrorKind::in_use) while an instance applies the inbox (it holds the processing
// lock, store/postgres/database.h), as on SQLite; a row lock held longer than the busy
// timeout (lock_timeout) fails it as busy too, with nothing erased.
#include <cstdint>
#include <memory>

#include "common/result.h"
#include "store/database_location.h"
#include "store/erasure.h"

namespace hh::store {

Result<std::unique_ptr<Erasure>> open_postgres_erasure(const Database& database, int64_t busy_timeout_ms = 5000);

}  // namespace hh::store
