#pragma once
// The rows of a query as text, alike on both backends, for the fixtures that compare or
// check them (tests/support/backend_store.h, tests/postgres/twin_stores.h): one line per
// row, "|" between values, "NULL" for NULL; each value as the engine gives it as text.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "store/postgres/connection.h"
#include "store/sqlite/connection.h"
#include "tests/support/test_must.h"

namespace hh::test {

// The first `columns` columns of each row of `sql` (0: all of them).
inline std::vector<std::string> text_rows(sqlite::Connection& db, const std::string& sql, int columns = 0) {
  std::vector<std::string> out;
  auto prepared = db.prepare(sql);
  BOOST_REQUIRE_MESSAGE(prepared.ok(), prepared.error() + ": " + sql);
  auto& stmt = prepared.value();
  const int shown = columns > 0 ? columns : sqlite3_column_count(stmt.get());
  twin_must(stmt.for_each_row([&](const sqlite::Statement& s) {
    std::string line;
    for (int c = 0; c < shown; ++c) {
      if (c > 0) line += '|';
      line += s.column_is_null(c) ? std::string("NULL") : std::string(s.column_text(c));
    }
    out.push_back(line);
  }));
  return out;
}

inline std::vector<std::string> text_rows(pg::Connection& db, const std::string& sql, int columns = 0) {
  std::vector<std::string> out;
  auto result = db.query(sql);
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error() + ": " + sql);
  const int shown = columns > 0 ? columns : PQnfields(result->get());
  for (int r = 0; r < result->size(); ++r) {
    std::string line;
    for (int c = 0; c < shown; ++c) {
      if (c > 0) line += '|';
      line += result->is_null(r, c) ? std::string("NULL") : std::string(result->text(r, c));
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace hh::test
