#pragma once
// Latest-wins writes of the tables with one row per key (summaries, connections, devices,
// lab_orders, lab_appointments, lab_results, lab_parsing_jobs, backfills, providers), for
// every backend: each table's statement is built from its description
// (store/schema/record_tables.h) once, when the writer is created, and each write binds the
// parsed row's fields in the description's order, straight from the parser's views.
//
// `LatestWins` is the backend's (store/sqlite/derived/latest_wins.h,
// store/postgres/derived/pg_latest_wins.h): create(connection, schema::LatestWinsSpec) and
// write_record<D>(row, seq) -> Result<WriteOutcome>.
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "common/result.h"
#include "store/derived/derived_parts.h"
#include "store/schema/record_rows.h"
#include "store/schema/record_tables.h"

namespace hh::store {

template <typename LatestWins>
class RecordWriter {
 public:
  template <typename Connection>
  static Result<RecordWriter> create(Connection& db) {
    RecordWriter writer;
    Result<void> made = create_each(db, writer, std::make_index_sequence<kTables>{});
    if (!made) return fail(made);
    return writer;
  }

  // A row of the table whose description writes `Row` (events' parsed rows: rows/).
  template <typename Row>
  Result<WriteOutcome> write(const Row& row, int64_t seq) {
    constexpr size_t index = table_of<Row>();
    using D = std::tuple_element_t<index, schema::LatestWinsTables>;
    return tables_[index]->template write_record<D>(row, seq);
  }

 private:
  static constexpr size_t kTables = std::tuple_size_v<schema::LatestWinsTables>;

  // The index in schema::LatestWinsTables of the description that writes `Row`.
  template <typename Row, size_t I = 0>
  static constexpr size_t table_of() {
    static_assert(I < kTables, "no record table writes this row type");
    if constexpr (std::is_same_v<typename std::tuple_element_t<I, schema::LatestWinsTables>::Written, Row>) {
      return I;
    } else {
      return table_of<Row, I + 1>();
    }
  }

  template <typename Connection, size_t... I>
  static Result<void> create_each(Connection& db, RecordWriter& writer, std::index_sequence<I...>) {
    Result<void> made;
    // In table order; the first failure stops the rest.
    ((made ? made = writer.template create_one<I>(db) : made), ...);
    return made;
  }

  template <size_t I, typename Connection>
  Result<void> create_one(Connection& db) {
    using D = std::tuple_element_t<I, schema::LatestWinsTables>;
    auto table = LatestWins::create(db, schema::latest_wins_spec<D>());
    if (!table) return fail(table);
    tables_[I].emplace(std::move(*table));
    return {};
  }

  std::array<std::optional<LatestWins>, kTables> tables_;  // by schema::LatestWinsTables; all set once created
};

}  // namespace hh::store
