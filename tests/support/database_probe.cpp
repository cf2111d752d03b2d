#include "tests/support/database_probe.h"

#include <thread>

#include "store/sqlite/database.h"

namespace hh::test {

int64_t query_int(const std::string& database, const std::string& sql) {
  auto db = store::open_for_reading(database);
  if (!db) return -1;
  auto value = db->query_int(sql);
  return value && *value ? **value : -1;
}

std::string query_text(const std::string& database, const std::string& sql) {
  auto db = store::open_for_reading(database);
  if (!db) return {};
  auto statement = db->prepare(sql);
  if (!statement) return {};
  auto row = statement->step();
  if (!row || !*row) return {};
  return statement->column_is_null(0) ? std::string("NULL") : std::string(statement->column_text(0));
}

bool wait_for_value(const std::string& database, const std::string& sql, int64_t expected,
                    std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (query_int(database, sql) == expected) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace hh::test
