#pragma once
// What a column of the store holds, in words both dialects spell (store/schema/dialect.h):
// the one description of every table (store/schema/tables.h) is made of these.
#include <cstdint>
#include <span>
#include <string_view>

namespace hh::store::schema {

// A column's type. SQLite spells them in STRICT tables, PostgreSQL with its own names
// (docs/decisions/030-postgresql-store.md says why these).
enum class Type {
  text,     // TEXT             text              (stored JSON documents too: byte for byte)
  integer,  // INTEGER          bigint            (times in Unix ms, counts, ids, 0/1 flags)
  real,     // REAL             double precision
  bytes,    // BLOB             bytea             (inbox bodies)
  scalar,   // ANY              jsonb             (a JSON scalar kept with its type: 72, 72.0, "72")
};

// Which backends have a column (a PostgreSQL job's lease exists only there).
enum class Backends { both, postgres_only, sqlite_only };

struct Column {
  std::string_view name;
  Type type = Type::text;
  bool nullable = true;
  Backends backends = Backends::both;
};

}  // namespace hh::store::schema
