#include "tests/derived/store_dump.h"

#include <cstdio>
#include <stdexcept>

#include <boost/test/unit_test.hpp>

#include "store/sqlite/database.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/outbox/outbox_entries.h"
#include "store/sqlite/derived/derived_tables.h"
#include "tests/derived/sqlite_processor.h"

namespace hh::test {
namespace {

std::string literal(sqlite3_stmt* stmt, int column) {
  switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_NULL: return "NULL";
    case SQLITE_INTEGER: return std::to_string(sqlite3_column_int64(stmt, column));
    case SQLITE_FLOAT: {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.17g", sqlite3_column_double(stmt, column));
      return buffer;
    }
    case SQLITE_TEXT: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, column));
      return "'" + std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, column))) + "'";
    }
    default: {
      const auto* bytes = static_cast<const unsigned char*>(sqlite3_column_blob(stmt, column));
      std::string out = "x'";
      char hex[3];
      for (int i = 0; i < sqlite3_column_bytes(stmt, column); ++i) {
        std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
        out += hex;
      }
      return out + "'";
    }
  }
}

}  // namespace

sqlite::Connection open_store(const std::string& path) {
  auto db = store::open_for_writing(path, {});
  if (!db) throw std::runtime_error(db.error());
  return std::move(*db);
}

void apply_inbox(sqlite::Connection& db) {
  auto processor = sqlite_processor(db);
  BOOST_REQUIRE_MESSAGE(processor, processor.error());
  auto done = (*processor)->run_until_caught_up(nullptr);
  BOOST_REQUIRE_MESSAGE(done, done.error());
}

void make_outbox_entries(sqlite::Connection& db, const store::ForwardRule& rule, int64_t first_seq, int64_t last_seq) {
  auto insert = db.prepare(store::outbox_entries_sql(rule, store::EntriesMade::by_writer));
  BOOST_REQUIRE_MESSAGE(insert, insert.error());
  insert->bind(1, first_seq).bind(2, last_seq);
  auto made = insert->run();
  BOOST_REQUIRE_MESSAGE(made, made.error());
}

std::vector<std::string> rows(sqlite::Connection& db, const std::string& sql) {
  auto stmt = db.prepare(sql);
  if (!stmt) throw std::runtime_error(stmt.error());
  std::vector<std::string> out;
  for (;;) {
    auto row = stmt->step();
    if (!row) throw std::runtime_error(row.error());
    if (!*row) break;
    std::string line;
    for (int i = 0; i < sqlite3_column_count(stmt->get()); ++i) {
      if (i) line += "|";
      line += literal(stmt->get(), i);
    }
    out.push_back(std::move(line));
  }
  return out;
}

std::string value(sqlite::Connection& db, const std::string& sql) {
  auto all = rows(db, sql);
  return all.empty() ? std::string() : all.front();
}

int64_t count(sqlite::Connection& db, const std::string& table_and_where) {
  return std::stoll(value(db, "SELECT count(*) FROM " + table_and_where));
}

std::vector<std::string> dump_table(sqlite::Connection& db, const std::string& table) {
  auto probe = db.prepare("SELECT * FROM " + table);
  if (!probe) throw std::runtime_error(probe.error());
  std::string order;
  for (int i = 1; i <= sqlite3_column_count(probe->get()); ++i) order += (i > 1 ? ", " : "") + std::to_string(i);
  return rows(db, "SELECT * FROM " + table + " ORDER BY " + order);
}

std::map<std::string, std::vector<std::string>> dump_derived_state(sqlite::Connection& db) {
  std::map<std::string, std::vector<std::string>> state;
  for (std::string_view table : store::schema::derived_tables()) state[std::string(table)] = dump_table(db, std::string(table));
  state["processor_state"] = dump_table(db, "processor_state");
  state["deliveries"] = rows(db, "SELECT seq, status, family, error FROM deliveries ORDER BY seq");
  return state;
}

void append_deliveries(sqlite::Connection& db, const std::vector<store::NewDelivery>& deliveries) {
  auto inbox = store::SqliteInbox::create(db);
  BOOST_REQUIRE_MESSAGE(inbox, inbox.error());
  std::vector<const store::NewDelivery*> batch;
  for (const auto& d : deliveries) batch.push_back(&d);
  auto appended = inbox->append(batch);
  BOOST_REQUIRE_MESSAGE(appended, appended.error());
}

}  // namespace hh::test
