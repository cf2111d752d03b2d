#pragma once
// How each backend's SQL spells what the store's statements say once (the engines differ
// here and only here; the words are the same): parameters, casts, bytewise text order,
// column types. Statements written for both backends are written in one neutral
// spelling and spelled for a dialect once, when they are prepared (never per row):
//
//   ?N          a parameter                  SQLite ?N            PostgreSQL $N
//   ?N::type    a parameter of a type        SQLite ?N            PostgreSQL $N::type
//   COLLATE "C" bytewise text order          SQLite (dropped: BINARY is SQLite's default)
//
// Anything else is written as both engines read it (coalesce, not ifnull; CASE; ||).
// Where the engines differ beyond this (an upsert, GLOB against a regular expression, the
// scalar max against greatest), each backend writes its own statement.
#include <span>
#include <string>
#include <string_view>

#include "store/schema/column.h"

namespace hh::store::schema {

enum class Dialect { sqlite, postgres };

// `neutral` spelled for `dialect` (text inside '…' is left as it is).
std::string spell(std::string_view neutral, Dialect dialect);

// A column type as the dialect's CREATE TABLE writes it, and as its catalog names it
// (SQLite: PRAGMA table_info's type; PostgreSQL: information_schema.columns.data_type).
std::string_view type_name(Type type, Dialect dialect);

// `text` as a SQL string literal ('it''s'): for configured names and patterns quoted into
// a statement prepared once, never for values.
std::string sql_literal(std::string_view text);

// A condition that `column` matches one of `globs` (SQLite's GLOB: * ? [...], with the
// shell's `[!...]` read as `[^...]`; case-sensitive, the whole string), quoted in; true
// when there are none. SQLite spells it
// GLOB, PostgreSQL the same pattern as a regular expression (glob_regex.h).
std::string globs_condition(std::span<const std::string> globs, std::string_view column, Dialect dialect);

// Parameter `n` in the neutral spelling, of `type` where PostgreSQL needs to be told
// ("?3::text").
std::string param(int n, Type type);

}  // namespace hh::store::schema
