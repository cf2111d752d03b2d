#include "store/schema/dialect.h"

#include "common/glob_problem.h"
#include "store/schema/glob_regex.h"

namespace hh::store::schema {
namespace {

constexpr std::string_view kBytewise = " COLLATE \"C\"";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_'; }

// The length of a cast after a parameter ("::text", "::double precision", "::bigint[]") at
// `at`, or 0.
size_t cast_length(std::string_view sql, size_t at) {
  if (sql.substr(at, 2) != "::") return 0;
  size_t end = at + 2;
  while (end < sql.size() && is_word(sql[end])) ++end;
  if (sql.substr(end, 10) == " precision") end += 10;  // double precision
  if (sql.substr(end, 2) == "[]") end += 2;
  return end - at;
}

}  // namespace

std::string spell(std::string_view neutral, Dialect dialect) {
  std::string out;
  out.reserve(neutral.size() + 16);
  bool quoted = false;
  for (size_t i = 0; i < neutral.size();) {
    const char c = neutral[i];
    if (c == '\'') quoted = !quoted;
    if (!quoted && c == '?' && i + 1 < neutral.size() && is_digit(neutral[i + 1])) {
      size_t end = i + 1;
      while (end < neutral.size() && is_digit(neutral[end])) ++end;
      out += dialect == Dialect::postgres ? '$' : '?';
      out.append(neutral.substr(i + 1, end - i - 1));
      const size_t cast = cast_length(neutral, end);
      if (dialect == Dialect::postgres) out.append(neutral.substr(end, cast));
      i = end + cast;
      continue;
    }
    if (!quoted && dialect == Dialect::sqlite && neutral.substr(i, kBytewise.size()) == kBytewise) {
      i += kBytewise.size();
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

std::string_view type_name(Type type, Dialect dialect) {
  const bool lite = dialect == Dialect::sqlite;
  switch (type) {
    case Type::text: return lite ? "TEXT" : "text";
    case Type::integer: return lite ? "INTEGER" : "bigint";
    case Type::real: return lite ? "REAL" : "double precision";
    case Type::bytes: return lite ? "BLOB" : "bytea";
    case Type::scalar: return lite ? "ANY" : "jsonb";
  }
  return "";
}

std::string sql_literal(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    out.push_back(c);
    if (c == '\'') out.push_back('\'');
  }
  return out + "'";
}

std::string globs_condition(std::span<const std::string> globs, std::string_view column, Dialect dialect) {
  if (globs.empty()) return "true";
  std::string sql = "(";
  for (size_t i = 0; i < globs.size(); ++i) {
    if (i > 0) sql += " OR ";
    const std::string glob = glob_with_shell_negation(globs[i]);  // as written in settings: `[!h]` too
    sql += std::string(column) +
           (dialect == Dialect::sqlite ? " GLOB " + sql_literal(glob) : " ~ " + sql_literal(glob_to_regex(glob)));
  }
  return sql + ")";
}

std::string param(int n, Type type) {
  std::string out = "?" + std::to_string(n);
  switch (type) {
    case Type::text: return out + "::text";
    case Type::integer: return out + "::bigint";
    case Type::real: return out + "::double precision";
    case Type::bytes: return out + "::bytea";
    case Type::scalar: return out + "::jsonb";
  }
  return out;
}

}  // namespace hh::store::schema
