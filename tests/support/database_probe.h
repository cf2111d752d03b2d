#pragma once
// Reading a running server's database from a test, beside the server (a read-only
// connection of its own per call).
#include <chrono>
#include <cstdint>
#include <string>

namespace hh::test {

// One integer from a server's database; -1 when there is none (or no database yet).
int64_t query_int(const std::string& database, const std::string& sql);
// The first column of the first row as text ("NULL" for NULL, "" when there is no row).
std::string query_text(const std::string& database, const std::string& sql);
// Polls `sql` (one integer) until it equals `expected`; bounded.
bool wait_for_value(const std::string& database, const std::string& sql, int64_t expected,
                    std::chrono::seconds timeout = std::chrono::seconds(30));

}  // namespace hh::test
