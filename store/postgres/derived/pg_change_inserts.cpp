#include "store/postgres/derived/pg_change_inserts.h"

namespace hh::store {
namespace {

const std::string kPgChangeInsert = "hh_derived_changes_insert";
constexpr std::string_view kPgChangeInsertSql =
    "INSERT INTO changes (change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id) "
    "SELECT coalesce(max(change_id), 0) + 1, $1::bigint, $2::text, $3::text, $4::text, $5::bigint, $6::bigint, "
    "$7::bigint, $8::text FROM changes";

const std::string kPgChangeBatch = "hh_derived_changes_batch";
constexpr std::string_view kPgChangeBatchSql =
    "INSERT INTO changes (change_id, seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id) "
    "SELECT (SELECT coalesce(max(change_id), 0) FROM changes) + x.n, x.seq, x.table_name, x.row_key, x.op, "
    "x.row_count, x.from_ms, x.to_ms, x.user_id "
    "FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], "
    "$8::text[]) WITH ORDINALITY AS x(seq, table_name, row_key, op, row_count, from_ms, to_ms, user_id, n) "
    "ORDER BY x.n";

Result<void> insert_one_change(pg::Connection& db, const Change& change) {
  pg::Params p;
  p.add(change.seq).add(change.table);
  if (change.row_key.data() == nullptr) {
    p.add_null();
  } else {
    p.add(change.row_key);
  }
  p.add(change.op).add(change.row_count).add(change.from_ms).add(change.to_ms).add(change.user_id);
  if (auto locked = lock_new_ids(db); !locked) return locked;
  auto inserted = db.run(kPgChangeInsert, p);
  if (!inserted) return fail(inserted);
  return {};
}

}  // namespace

template <>
Result<PgChangeInserts> PgChangeInserts::create(pg::Connection& db) {
  for (const auto& [name, sql] :
       {std::pair{&kPgChangeInsert, kPgChangeInsertSql}, std::pair{&kPgChangeBatch, kPgChangeBatchSql}}) {
    if (auto prepared = prepare_once(db, *name, sql); !prepared) return fail(prepared);
  }
  if (auto prepared = prepare_lock_new_ids(db); !prepared) return fail(prepared);
  PgChangeInsertsState state;
  state.db = &db;
  return PgChangeInserts(std::move(state));
}

template <>
Result<void> PgChangeInserts::insert(std::span<const Change> changes) {
  if (changes.empty()) return {};
  if (changes.size() == 1) return insert_one_change(*state_.db, changes.front());
  auto& columns = state_.columns;
  for (ArrayLiteral& column : columns) column.clear();
  for (const Change& change : changes) {
    columns[0].integer(change.seq);
    columns[1].text(change.table);
    columns[2].text(change.row_key);
    columns[3].text(change.op);
    columns[4].integer(change.row_count);
    columns[5].integer(change.from_ms);
    columns[6].integer(change.to_ms);
    columns[7].text(change.user_id);
  }
  pg::Params p;
  p.add(columns[0].finish());  // seq: never NULL (the rows' count)
  for (size_t i = 1; i < std::size(columns); ++i) columns[i].add_to(p);
  if (auto locked = lock_new_ids(*state_.db); !locked) return locked;
  auto inserted = state_.db->run(kPgChangeBatch, p);
  if (!inserted) return fail(inserted);
  return {};
}

}  // namespace hh::store
