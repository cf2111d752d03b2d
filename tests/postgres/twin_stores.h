#pragma once
// One empty store of each backend, side by side, for tests that run the same operations
// through the SQLite and the PostgreSQL implementation and compare what they leave: a
// SQLite file (store/sqlite/database.h: created and migrated) and a fresh PostgreSQL
// database on the test server (tests/support/postgres_cluster.h), migrated.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/postgres/database.h"
#include "store/sqlite/database.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_must.h"
#include "tests/support/text_rows.h"

namespace hh::test {

struct TwinStores {
  TempDir dir;
  std::string lite_path = dir.file("twin.db");
  sqlite::Connection lite = twin_must(store::open_for_writing(lite_path, {}));
  std::string pg_uri = PostgresCluster::shared().fresh_database();
  pg::Connection pg = twin_must(store::connect_migrated({pg_uri, ""}));

  // Another connection to the PostgreSQL store (a second instance).
  pg::Connection pg_connection() const { return twin_must(store::connect_migrated({pg_uri, ""})); }

  // SQL both backends read the same way, run on both.
  void exec(const std::string& sql) {
    BOOST_REQUIRE_MESSAGE(lite.exec(sql).ok(), sql);
    auto done = pg.exec(sql);
    BOOST_REQUIRE_MESSAGE(done.ok(), done.error() + ": " + sql);
  }

  // An inbox row, as the receiver (webhook) or the fetcher (fetch) stores it.
  void inbox(int64_t seq, std::string_view message_id, std::string_view origin, int64_t received_at,
             std::optional<std::string_view> event_type, std::string_view headers, std::string_view body) {
    auto stmt = twin_must(lite.prepare(
        "INSERT INTO inbox (seq, message_id, origin, received_at, event_type, headers, body) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
    stmt.bind(1, seq).bind(2, message_id).bind(3, origin).bind(4, received_at).bind(5, event_type).bind(6, headers);
    stmt.bind_blob(7, std::span<const char>(body.data(), body.size()));
    BOOST_REQUIRE(stmt.run().ok());
    auto inserted = pg.query(
        "INSERT INTO inbox (seq, message_id, origin, received_at, event_type, headers, body) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7)",
        pg::Params().add(seq).add(message_id).add(origin).add(received_at).add(event_type).add(headers).bytes(body));
    BOOST_REQUIRE_MESSAGE(inserted.ok(), inserted.error());
    if (seq > 0) BOOST_REQUIRE(pg.query("SELECT setval('inbox_seq', greatest($1, (SELECT last_value FROM inbox_seq)))",
                                        pg::Params().add(seq)).ok());
  }

  // The rows of `sql` (valid on both, `columns` columns), one line each, "|" between
  // values, "NULL" for NULL; SQLite first, PostgreSQL second.
  std::pair<std::vector<std::string>, std::vector<std::string>> rows(const std::string& sql, int columns) {
    return {text_rows(lite, sql, columns), text_rows(pg, sql, columns)};
  }

  // Checks that `sql` reads the same rows on both; returns them (SQLite's).
  std::vector<std::string> same_rows(const std::string& sql, int columns) {
    auto [lite_rows, pg_rows] = rows(sql, columns);
    std::string shown;
    for (size_t i = 0; i < std::max(lite_rows.size(), pg_rows.size()); ++i) {
      const std::string a = i < lite_rows.size() ? lite_rows[i] : "(none)";
      const std::string b = i < pg_rows.size() ? pg_rows[i] : "(none)";
      if (a != b) shown += "\n  sqlite:     " + a + "\n  postgresql: " + b;
    }
    BOOST_TEST(shown.empty(), sql << shown);
    return lite_rows;
  }
};

}  // namespace hh::test
