#pragma once
// Reads the server's database from the outside, as a backend would (a read-only
// connection while the server runs): inbox counts and processor progress.
#include <chrono>
#include <cstdint>
#include <string>

namespace hh::test {

// count(*) of deliveries matching `where` (SQL); throws when the database cannot be read.
int64_t deliveries_where(const std::string& database, const std::string& where = "1");

// Polls until processor_state.applied_seq reaches max(deliveries.seq), or `limit` passes.
// Returns "" when caught up, else "applied_seq A of N".
std::string wait_until_processed(const std::string& database, std::chrono::seconds limit);

}  // namespace hh::test
