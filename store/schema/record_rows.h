#pragma once
// A record table's rows in and out, from its description (store/schema/record_tables.h):
//
//   bind_record<D>(binder, row, seq)   the parsed row's fields, keys first then values, in
//                                      the order of D::fields (latest_wins_spec<D>()'s)
//   read_record<D>(columns, row)       the read row from the columns record_select<D>()
//                                      lists, in the order of D::fields
//
// `Binder` is a backend's (store/sqlite/derived/, store/postgres/derived/): add() for
// std::string_view, std::optional<std::string_view>, int64_t, std::optional<int64_t> and
// std::optional<bool> (a 0/1 flag). `Columns` is a backend's current result row with the
// readers of store/read_query_common.h. Both folds are inlined: the write is on the
// processor's hot path.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "store/schema/record_fields.h"

namespace hh::store::schema {

template <typename D, typename Binder>
void bind_record(Binder& binder, const typename D::Written& row, int64_t seq) {
  for_each_field(D::fields, [&](const auto& field) {
    using F = std::decay_t<decltype(field)>;
    if constexpr (F::writes_member) {
      binder.add(row.*(field.write));
    } else if constexpr (F::writes_seq) {
      binder.add(seq);
    } else if constexpr (F::writes_null) {
      binder.add(std::optional<int64_t>{});
    }
  });
}

template <typename Columns>
void read_value(const Columns& s, int column, std::string_view& value) {
  value = s.column_text(column);
}
template <typename Columns>
void read_value(const Columns& s, int column, std::optional<std::string_view>& value) {
  value = s.column_optional_text(column);
}
template <typename Columns>
void read_value(const Columns& s, int column, int64_t& value) {
  value = s.column_int(column);
}
template <typename Columns>
void read_value(const Columns& s, int column, std::optional<int64_t>& value) {
  value = s.column_optional_int(column);
}
template <typename Columns>
void read_value(const Columns& s, int column, std::optional<bool>& value) {
  value = s.column_optional_bool(column);
}
template <typename Columns>
void read_value(const Columns& s, int column, std::optional<double>& value) {
  value = s.column_optional_double(column);
}

template <typename D, typename Columns>
void read_record(const Columns& s, typename D::Stored& row) {
  int column = 0;
  for_each_field(D::fields, [&](const auto& field) {
    if constexpr (std::decay_t<decltype(field)>::read_into) read_value(s, column++, row.*(field.read));
  });
}

// A column a write sets to a constant: a SQL literal written in the description, never a
// value from a delivery.
struct FixedValue {
  std::string_view column;
  std::string_view literal;  // "'deregistered'"
};

// A column of `values` whose row value a written NULL keeps, when the written `if_column`
// (another of `values`) is `literal` (record_fields.h: kept_when_null_and).
struct KeptWhenNull {
  std::string_view column;
  std::string_view if_column;
  std::string_view literal;
};

// A latest-wins table's statement, as each backend builds it (store/sqlite/derived/
// latest_wins.h, store/postgres/derived/pg_latest_wins.h): column names are trusted
// identifiers, never values.
struct LatestWinsSpec {
  std::string_view table;
  std::span<const std::string_view> keys;          // the conflict target, bound first
  std::span<const std::string_view> values;        // the rest, bound after the keys, `seq` among them
  std::span<const std::string_view> indexed = {};  // those of `values` a secondary index holds
  std::span<const KeptWhenNull> kept_when_null = {};  // those of `values` a NULL may leave as they are
  std::span<const FixedValue> fixed = {};          // set by the insert and by the update
  std::span<const FixedValue> insert_only = {};    // set by the insert alone (NOT NULL columns the write leaves)
  std::string_view write = {};  // names the write when a table has two ("" for the table's own)
};

// The columns of the latest-wins write of D: keys (the conflict target, bound first), the
// values (`seq` among them), those a secondary index holds and those a NULL does not
// overwrite.
// Whether every key field comes before the other fields (bind order: keys first).
template <const auto& fields>
constexpr bool keys_first() {
  bool seen_value = false, ok = true;
  for_each_field(fields, [&](const auto& field) {
    if (field.key && seen_value) ok = false;
    if (!field.key) seen_value = true;
  });
  return ok;
}

template <typename D>
struct LatestWinsColumns {
  static_assert(keys_first<D::fields>(), "a record table's key fields come first");
  static constexpr auto keys = names_of<D::fields>(IsKey{});
  static constexpr auto values = names_of<D::fields>(IsWrittenValue{});
  static constexpr auto indexed = names_of<D::fields>(IsIndexed{});
  static constexpr auto kept_when_null = [] {
    std::array<KeptWhenNull, count_fields(D::fields, IsKeptWhenNull{})> out{};
    size_t i = 0;
    for_each_field(D::fields, [&](const auto& f) {
      if (IsKeptWhenNull{}(f)) out[i++] = {f.name, f.kept_when_null.if_column, f.kept_when_null.literal};
    });
    return out;
  }();
};

// A description may add `fixed`, `insert_only` (arrays of FixedValue) and `write` (a name)
// for a second write of a table that sets only some of its columns (Deregistrations).
template <typename D>
LatestWinsSpec latest_wins_spec() {
  using C = LatestWinsColumns<D>;
  LatestWinsSpec spec{D::name, C::keys, C::values, C::indexed, C::kept_when_null};
  if constexpr (requires { D::write; }) {
    spec.fixed = D::fixed;
    spec.insert_only = D::insert_only;
    spec.write = D::write;
  }
  return spec;
}

}  // namespace hh::store::schema
