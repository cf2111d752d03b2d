#pragma once
// Shared by the tests of getting data in and out (tests/io): realistic event bodies, a
// text dump of the derived tables for table-by-table comparisons, and waiting until a
// server's processor has applied its inbox.
#include <string>
#include <vector>

namespace hh::test::io {

// daily.data.<resource>.created with one sample per (time, value) pair.
std::string samples_body(const std::string& user, const std::string& resource, const std::string& provider,
                         const std::vector<std::pair<std::string, double>>& samples, const std::string& unit = "bpm");
// daily.data.sleep.updated for summary `id` with `score`.
std::string sleep_body(const std::string& user, const std::string& id, int score, const std::string& bedtime_start);
// provider.connection.created / .error.
std::string connection_body(const std::string& user, const std::string& provider, bool error);

// Every derived table (and the change feed), one "table: row" line per row, ordered.
// `with_positions` false leaves out seq, change_id and series ids (they depend on the
// order deliveries of different users arrived in): samples come from samples_named.
std::string derived_tables(const std::string& database, bool with_positions);
// Rows of `sql` as text lines ("a|b|NULL").
std::string dump(const std::string& database, const std::string& sql);
// One integer from `sql`.
long long query_int(const std::string& database, const std::string& sql);

// Waits (up to a minute) until processor_state.applied_seq reaches the newest inbox seq.
void wait_until_processed(const std::string& database);

}  // namespace hh::test::io
