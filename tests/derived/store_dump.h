#pragma once
// Test helpers for the derived tables: open a migrated store in a temporary folder, fill
// its inbox, read
// rows as literal strings, and dump whole tables for equality checks (rebuild == live).
// Values render as SQL literals: 42, 1.5, 'text', NULL, x'00ff'.
#include <map>
#include <string>
#include <vector>

#include "store/inbox.h"
#include "store/outbox.h"
#include "store/sqlite/connection.h"

namespace hh::test {

// open_for_writing() of `path`; throws std::runtime_error on failure (tests only).
sqlite::Connection open_store(const std::string& path);

// Appends `deliveries` to the inbox of `db` in one transaction; fails the test on error.
void append_deliveries(sqlite::Connection& db, const std::vector<store::NewDelivery>& deliveries);

// Applies the whole inbox with the processor `serve` runs; fails the test on error. The
// processor (and its processing lock) is gone when this returns.
void apply_inbox(sqlite::Connection& db);

// The outbox entries of `rule` for the deliveries first_seq..last_seq, as the sender of
// `serve` makes them (store::Outbox::catch_up()); fails the test on error.
void make_outbox_entries(sqlite::Connection& db, const store::ForwardRule& rule, int64_t first_seq, int64_t last_seq);

// Every row of `sql`, each as its values joined by '|'.
std::vector<std::string> rows(sqlite::Connection& db, const std::string& sql);
// The single value of `sql` (first column of the first row), "" when there is no row.
std::string value(sqlite::Connection& db, const std::string& sql);
int64_t count(sqlite::Connection& db, const std::string& table_and_where);

// Every column of every row of `table`, ordered by all columns.
std::vector<std::string> dump_table(sqlite::Connection& db, const std::string& table);

// What `rebuild` must reproduce: every derived table, processor_state and the
// processing outcome of each delivery (seq, status, family, error). Jobs excluded.
std::map<std::string, std::vector<std::string>> dump_derived_state(sqlite::Connection& db);

}  // namespace hh::test
