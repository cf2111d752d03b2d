#pragma once
// The pieces a table with one row per key is described with (store/schema/record_tables.h):
// each column once, with the member of the parsed row it is written from and the member of
// the read row it is read into. From such a list come, for either dialect, the table's
// columns and key, the latest-wins statement and its binder, the listing and lookup
// statements and their row reader (store/schema/record_sql.h, record_rows.h).
//
//   key("id", &rows::DeviceRow::id, &StoredDevice::id)          a primary-key column
//   column("user_id", &rows::DeviceRow::user_id, &StoredDevice::user_id)
//   indexed(column(…))      a secondary index holds it (SQLite spares an unchanged entry)
//   as_json(column(…))      stored JSON text: output embeds it as JSON
//   as_time(column(…))      Unix ms (`start_ms`): output is RFC 3339, named without `_ms`
//   seq(&StoredDevice::seq) the delivery that wrote the row (written from the apply's seq)
//   kept_when_null_and(column(…), "status", "'error'")   a write that has no value for it
//                           (NULL) keeps the row's when that write's `status` is 'error' (a
//                           connection error event carries no external_user_id; a created
//                           event's null is the provider's answer and replaces it)
//   cleared("deregistered_at", &StoredConnection::deregistered_at_ms)   a column every
//                           write of this row sets NULL (a connection event reconnects)
//   joined("j.state", "job_state", &StoredBackfill::job_state)   read from a joined table
//                           (SQL expression, output name), not a column of the table
//   no_member               a column the writer fills otherwise, or a listing leaves out
//
// The read fields, in order, are also the row's output fields (store/row_format.h): what
// `healthhook query` prints and the read API returns.
//
// A column's type and whether it may be NULL follow from the member's type (ValueOf below):
// std::string_view is NOT NULL text, std::optional<std::string_view> text, int64_t a NOT
// NULL integer, std::optional<bool> a 0/1 flag (integer), and so on.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "store/schema/column.h"

namespace hh::store::schema {

// A field's write side when it is not a member of the parsed row.
struct SeqOfDelivery {};
struct WrittenNull {};
struct NoMember {};
inline constexpr NoMember no_member{};

// The column type of a member's value type.
template <typename T>
struct ValueOf;
template <>
struct ValueOf<std::string_view> {
  static constexpr Type type = Type::text;
  static constexpr bool nullable = false;
};
template <>
struct ValueOf<std::optional<std::string_view>> {
  static constexpr Type type = Type::text;
  static constexpr bool nullable = true;
};
template <>
struct ValueOf<int64_t> {
  static constexpr Type type = Type::integer;
  static constexpr bool nullable = false;
};
template <>
struct ValueOf<std::optional<int64_t>> {
  static constexpr Type type = Type::integer;
  static constexpr bool nullable = true;
};
template <>
struct ValueOf<std::optional<bool>> {  // a 0/1 flag, as SQLite keeps it
  static constexpr Type type = Type::integer;
  static constexpr bool nullable = true;
};
template <>
struct ValueOf<std::optional<double>> {
  static constexpr Type type = Type::real;
  static constexpr bool nullable = true;
};

template <typename Pointer>
struct MemberValue;
template <typename Class, typename Value>
struct MemberValue<Value Class::*> {
  using type = Value;
};

template <typename Write, typename Read>
struct Field {
  std::string_view name;  // the column; for a joined field, the SQL expression it is read from
  Write write;            // Value Row::*, SeqOfDelivery, WrittenNull or NoMember
  Read read;              // Value Stored::* or NoMember
  bool key = false;
  bool indexed = false;
  // Set: a NULL written keeps the row's value when the written `if_column` is `literal`.
  struct KeptWhenNull {
    std::string_view if_column;
    std::string_view literal;
  } kept_when_null{};
  bool is_joined = false;
  bool is_json = false;
  bool is_time = false;
  std::string_view output = {};  // the output field's name when not the column's

  static constexpr bool writes_member = std::is_member_object_pointer_v<Write>;
  static constexpr bool writes_seq = std::is_same_v<Write, SeqOfDelivery>;
  static constexpr bool writes_null = std::is_same_v<Write, WrittenNull>;
  static constexpr bool written = writes_member || writes_seq || writes_null;
  static constexpr bool read_into = std::is_member_object_pointer_v<Read>;

  // The name of its output field.
  constexpr std::string_view output_name() const {
    if (!output.empty()) return output;
    if (is_time && name.ends_with("_ms")) return name.substr(0, name.size() - 3);
    return name;
  }

  // The column it describes (not for a joined field).
  constexpr Column column() const {
    if constexpr (writes_seq) {
      return Column{name, Type::integer, false};
    } else if constexpr (writes_member) {
      using V = typename MemberValue<Write>::type;
      return Column{name, ValueOf<V>::type, ValueOf<V>::nullable};
    } else {
      using V = typename MemberValue<Read>::type;
      return Column{name, ValueOf<V>::type, ValueOf<V>::nullable};
    }
  }
};

template <typename Write, typename Read>
constexpr Field<Write, Read> key(std::string_view name, Write write, Read read) {
  return {name, write, read, true};
}
template <typename Write, typename Read>
constexpr Field<Write, Read> column(std::string_view name, Write write, Read read) {
  return {name, write, read};
}
template <typename Write, typename Read>
constexpr Field<Write, Read> indexed(Field<Write, Read> field) {
  field.indexed = true;
  return field;
}
template <typename Write, typename Read>
constexpr Field<Write, Read> kept_when_null_and(Field<Write, Read> field, std::string_view if_column,
                                                std::string_view literal) {
  field.kept_when_null = {if_column, literal};
  return field;
}
template <typename Write, typename Read>
constexpr Field<Write, Read> as_json(Field<Write, Read> field) {
  field.is_json = true;
  return field;
}
template <typename Write, typename Read>
constexpr Field<Write, Read> as_time(Field<Write, Read> field) {
  field.is_time = true;
  return field;
}
template <typename Read>
constexpr Field<SeqOfDelivery, Read> seq(Read read) {
  return {"seq", SeqOfDelivery{}, read};
}
template <typename Read>
constexpr Field<WrittenNull, Read> cleared(std::string_view name, Read read) {
  return {name, WrittenNull{}, read};
}
template <typename Read>
constexpr Field<NoMember, Read> joined(std::string_view expression, std::string_view output, Read read) {
  Field<NoMember, Read> field{expression, NoMember{}, read};
  field.is_joined = true;
  field.output = output;
  return field;
}

// Calls `f(field)` for each field of `fields` (a std::tuple of Field), in order.
template <typename Fields, typename F>
constexpr void for_each_field(const Fields& fields, F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, fields);
}

// How many fields of `fields` satisfy `pred`.
template <typename Fields, typename Pred>
constexpr size_t count_fields(const Fields& fields, Pred pred) {
  size_t n = 0;
  for_each_field(fields, [&](const auto& field) { n += pred(field) ? 1 : 0; });
  return n;
}

// The table's own columns (joined fields left out), in field order.
template <const auto& fields>
constexpr auto columns_of() {
  constexpr size_t n = count_fields(fields, [](const auto& f) { return !f.is_joined; });
  std::array<Column, n> out{};
  size_t i = 0;
  for_each_field(fields, [&](const auto& f) {
    if (!f.is_joined) out[i++] = f.column();
  });
  return out;
}

// The names of the fields `pred` picks, in field order.
template <const auto& fields, typename Pred>
constexpr auto names_of(Pred pred) {
  constexpr size_t n = count_fields(fields, Pred{});
  std::array<std::string_view, n> out{};
  size_t i = 0;
  for_each_field(fields, [&](const auto& f) {
    if (pred(f)) out[i++] = f.name;
  });
  return out;
}

struct IsKey {
  template <typename F>
  constexpr bool operator()(const F& f) const { return f.key; }
};
struct IsWrittenValue {  // a written column other than the key's
  template <typename F>
  constexpr bool operator()(const F& f) const { return F::written && !f.key; }
};
struct IsIndexed {
  template <typename F>
  constexpr bool operator()(const F& f) const { return f.indexed; }
};
struct IsKeptWhenNull {
  template <typename F>
  constexpr bool operator()(const F& f) const { return !f.kept_when_null.if_column.empty(); }
};
struct IsRead {
  template <typename F>
  constexpr bool operator()(const F&) const { return F::read_into; }
};

}  // namespace hh::store::schema
