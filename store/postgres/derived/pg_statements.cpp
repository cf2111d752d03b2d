#include "store/postgres/derived/pg_statements.h"

#include <charconv>

#include "common/json_writer.h"
#include "store/postgres/database.h"

namespace hh::store {

Result<void> prepare_once(pg::Connection& db, const std::string& name, std::string_view sql) {
  auto exists = db.query_int("SELECT count(*) FROM pg_prepared_statements WHERE name = $1", pg::Params().add(name));
  if (!exists) return fail(exists);
  if (exists->value_or(0) > 0) return {};
  return db.prepare(name, sql);
}

namespace {
const std::string kPgLockNewIds = "hh_lock_new_ids";
}  // namespace

Result<void> prepare_lock_new_ids(pg::Connection& db) {
  return prepare_once(db, kPgLockNewIds, "SELECT pg_advisory_xact_lock(" + std::to_string(kNewIdsLock) + ")");
}

Result<void> lock_new_ids(pg::Connection& db) {
  auto locked = db.run(kPgLockNewIds);
  if (!locked) return fail(locked, "locking new ids");
  return {};
}

namespace {

void append_real(std::string& out, double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest exact form
  out.append(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace

bool json_scalar(std::string& out, const rows::SampleValue& value) {
  out.clear();
  switch (value.index()) {
    case 1: {
      char buffer[24];
      out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, std::get<int64_t>(value)).ptr);
      return true;
    }
    case 2: {
      const double real = std::get<double>(value);
      append_real(out, real);
      // A float that prints like an integer keeps a fraction: jsonb keeps 72.0 as written.
      // jsonb writes 1e+05 out as 100000, which reads back as an integer: a round float
      // whose shortest form has a positive exponent is written out in full, with ".0".
      if (out.find("e+") != std::string::npos) {
        char buffer[400];  // DBL_MAX in full is 309 digits
        const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, real, std::chars_format::fixed);
        if (ec == std::errc()) out.assign(buffer, end);
      }
      if (out.find_first_of(".eEni") == std::string::npos) out.append(".0");
      return true;
    }
    case 3: json::append_string(out, std::get<std::string_view>(value)); return true;
    default: return false;
  }
}

void ArrayLiteral::integer(int64_t value) {
  ++values_;
  char buffer[24];
  separator().append(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
}

void ArrayLiteral::real(double value) {
  ++values_;
  append_real(separator(), value);
}

void ArrayLiteral::text(std::string_view value) {
  ++values_;
  std::string& out = separator();
  out.push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

}  // namespace hh::store
