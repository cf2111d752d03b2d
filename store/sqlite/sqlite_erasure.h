#pragma once
// The SQLite Erasure (store/erasure.h): `healthhook purge-user` on an admin connection of
// an existing database (store/sqlite/jobs/sqlite_job_admin.h: busy_timeout, nothing created).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/erasure.h"

namespace hh::store {

Result<std::unique_ptr<Erasure>> open_sqlite_erasure(const std::string& path, int64_t busy_timeout_ms = 5000);

// The tables erase() empties of a user's rows, in that order (tests check that every table
// with a user column of a fresh database is among them).
std::vector<std::string_view> sqlite_erasure_tables();

}  // namespace hh::store
