#include "tests/faults/store_probe.h"

#include <stdexcept>
#include <thread>

#include "store/sqlite/database.h"

namespace hh::test {

int64_t deliveries_where(const std::string& database, const std::string& where) {
  auto db = store::open_for_reading(database);
  if (!db) throw std::runtime_error(db.error());
  auto n = db->query_int("SELECT count(*) FROM deliveries WHERE " + where);
  if (!n) throw std::runtime_error(n.error());
  return n->value_or(0);
}

std::string wait_until_processed(const std::string& database, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::string last = "database not readable";
  for (;;) {
    if (auto db = store::open_for_reading(database)) {
      auto applied = db->query_int("SELECT applied_seq FROM processor_state");
      auto newest = db->query_int("SELECT max(seq) FROM deliveries");
      if (applied && newest) {
        const int64_t a = applied->value_or(0), n = newest->value_or(0);
        if (a >= n) return {};
        last = "applied_seq " + std::to_string(a) + " of " + std::to_string(n);
      }
    }
    if (std::chrono::steady_clock::now() > deadline) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace hh::test
