#include "store/migrate/sqlite_to_postgres.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "store/schema/tables.h"
#include "store/postgres/connection.h"
#include "store/postgres/copy_progress.h"
#include "store/postgres/database.h"
#include "store/postgres/derived/pg_statements.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/database.h"
#include "store/sqlite/processing_lock.h"
#include "store/unfinished_rebuild.h"
#include "store/unfinished_rebuild_sql.h"

namespace hh::store {
namespace {

constexpr std::string_view kProgressTable = kSqliteCopyProgressTable;

// How a value goes into the binary COPY stream: by the target column's type.
enum class CopyKind { integer, real, text, bytes, json_scalar };

struct CopyTable {
  std::string name;
  std::vector<std::string> columns;  // the source's, in its order; all in the target
  std::vector<CopyKind> kinds;
  std::vector<std::string> key;      // the primary key's columns, in order
  int integer_key_column = -1;       // index in `columns` when the key is one integer column
  int64_t source_rows = 0;
};

struct CopyProgress {
  int64_t rows_copied = 0;
  std::optional<int64_t> last_key;
};

template <typename T>
Error copy_error(const Result<T>& result, const std::string& context) {
  return {context + ": " + result.error(), result.error_kind()};
}

// A failure passed on as it is, kind kept.
template <typename T>
Error pass(const Result<T>& result) {
  return {result.error(), result.error_kind()};
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

Result<int64_t> lite_int(sqlite::Connection& db, const std::string& sql) {
  auto value = db.query_int(sql);
  if (!value) return copy_error(value, "reading the source");
  return value->value_or(0);
}

Result<int64_t> pg_int(pg::Connection& db, std::string_view sql, const pg::Params& params = {}) {
  auto value = db.query_int(sql, params);
  if (!value) return copy_error(value, "reading the target");
  return value->value_or(0);
}

// The plan of one table, from its description (store/schema/tables.h): the columns both
// backends have, with the target's types, and its key; its rows are counted later
// (count_source_rows). (schema_check_test holds both migrated schemas to the description,
// so the target has every one of them.)
CopyTable plan_table(const schema::Table& description) {
  CopyTable table;
  table.name = std::string(description.name);
  for (const schema::Column& column : description.columns) {
    if (!schema::in_sqlite(column)) continue;
    table.columns.emplace_back(column.name);
    switch (column.type) {
      case schema::Type::integer: table.kinds.push_back(CopyKind::integer); break;
      case schema::Type::real: table.kinds.push_back(CopyKind::real); break;
      case schema::Type::bytes: table.kinds.push_back(CopyKind::bytes); break;
      case schema::Type::scalar: table.kinds.push_back(CopyKind::json_scalar); break;
      case schema::Type::text: table.kinds.push_back(CopyKind::text); break;
    }
  }
  for (std::string_view key : description.key) table.key.emplace_back(key);
  if (table.key.size() == 1) {
    const auto at = std::find(table.columns.begin(), table.columns.end(), table.key[0]);
    const int index = static_cast<int>(at - table.columns.begin());
    if (table.kinds[index] == CopyKind::integer) table.integer_key_column = index;
  }
  return table;
}

// Each table's row count in the source (its snapshot): the fingerprint's numbers. Long on a
// large source, so it runs after the unfinished mark is in the target.
Result<void> count_source_rows(sqlite::Connection& lite, std::vector<CopyTable>& tables) {
  for (CopyTable& table : tables) {
    auto rows = lite_int(lite, "SELECT count(*) FROM " + table.name);
    if (!rows) return pass(rows);
    table.source_rows = *rows;
  }
  return {};
}

// The progress table with only the unfinished mark (store/postgres/copy_progress.h): from
// here until finish_copy's last transaction every other opener refuses the target.
Result<void> mark_copy_started(pg::Connection& pg) {
  auto transaction = pg::Transaction::begin(pg);
  if (!transaction) return copy_error(transaction, "starting the copy");
  auto created = pg.exec("CREATE TABLE " + std::string(kProgressTable) +
                         " (table_name text PRIMARY KEY, rows_copied bigint NOT NULL, last_key bigint, "
                         "source text NOT NULL)");
  if (!created) return copy_error(created, "starting the copy");
  auto marked = pg.query("INSERT INTO " + std::string(kProgressTable) +
                             " (table_name, rows_copied, source) VALUES ($1, 0, '')",
                         pg::Params().add(kCopyUnfinishedMark));
  if (!marked) return copy_error(marked, "starting the copy");
  if (auto committed = transaction->commit(); !committed) return copy_error(committed, "starting the copy");
  return {};
}

// What identifies the source as it is now: its row counts, the processor's position and
// the last job update. A copy resumed from a source that changed meanwhile is refused.
Result<std::string> source_fingerprint(sqlite::Connection& lite, const std::vector<CopyTable>& tables) {
  std::string out;
  for (const CopyTable& table : tables) out += table.name + "=" + std::to_string(table.source_rows) + " ";
  auto applied = lite_int(lite, "SELECT applied_seq FROM processor_state WHERE id = 1");
  if (!applied) return pass(applied);
  auto jobs = lite_int(lite, "SELECT coalesce(max(updated_at), 0) FROM jobs");
  if (!jobs) return pass(jobs);
  auto outbox = lite_int(lite, "SELECT coalesce(max(outbox_id), 0) FROM outbox");
  if (!outbox) return pass(outbox);
  return out + "applied_seq=" + std::to_string(*applied) + " jobs_updated=" + std::to_string(*jobs) +
         " outbox_max=" + std::to_string(*outbox);
}

// The target's deliveries, in words, for refusals: "3 deliveries (seq 1-3)".
Result<std::string> target_inbox_words(pg::Connection& pg) {
  auto rows = pg.query("SELECT count(*), min(seq), max(seq) FROM inbox");
  if (!rows) return copy_error(rows, "reading the target's inbox");
  return std::string(rows->text(0, 0)) + " deliveries (seq " + std::string(rows->text(0, 1)) + "-" +
         std::string(rows->text(0, 2)) + ")";
}

// A serve started once on the target (to create the schema, say) leaves rows of its own: a
// retention walk's position, the provider list it fetched.
constexpr std::string_view kEmptyTargetHint =
    ": migrate into a database no serve has run on (create it again; migrate creates the schema itself)";

// A target without progress rows: it must be empty (a freshly migrated store).
Result<void> check_target_empty(pg::Connection& pg, const std::vector<CopyTable>& tables,
                                const std::string& source_name) {
  for (const CopyTable& table : tables) {
    auto any = pg_int(pg, "SELECT count(*) FROM (SELECT 1 FROM " + table.name + " LIMIT 1) AS t");
    if (!any) return pass(any);
    if (*any == 0) continue;
    if (table.name == "inbox") {
      auto words = target_inbox_words(pg);
      if (!words) return pass(words);
      return fail(ErrorKind::data, "the target already holds " + *words + " that were not copied from " + source_name +
                                       "; migrate copies into an empty store only (it never merges two stores)" +
                                       std::string(kEmptyTargetHint));
    }
    return fail(ErrorKind::data, "the target's table " + table.name +
                                     " is not empty; migrate copies into an empty store only (it never merges two stores)" +
                                     std::string(kEmptyTargetHint));
  }
  auto applied = pg_int(pg, "SELECT applied_seq FROM processor_state WHERE id = 1");
  if (!applied) return pass(applied);
  if (*applied != 0) return fail(ErrorKind::data, "the target's processor_state is not empty; migrate copies into an empty store only");
  return {};
}

// A target with progress rows: they must be this source's, and its inbox what they say.
Result<void> check_target_resumable(pg::Connection& pg, sqlite::Connection& lite, const std::string& fingerprint,
                                    const std::string& source_name) {
  auto others = pg_int(pg, "SELECT count(*) FROM " + std::string(kProgressTable) + " WHERE source <> $1 AND table_name <> $2",
                       pg::Params().add(fingerprint).add(kCopyUnfinishedMark));
  if (!others) return pass(others);
  if (*others > 0) {
    return fail(ErrorKind::data, "the target holds a copy (whole or in part) of another SQLite store, or of " +
                                     source_name + " as it was before it changed; migrate copies into an empty store "
                                     "only: drop and re-create the target database to start over");
  }
  auto progress = pg.query("SELECT rows_copied, coalesce(last_key, 0) FROM " + std::string(kProgressTable) +
                           " WHERE table_name = 'inbox'");
  if (!progress) return copy_error(progress, "reading the copy's progress");
  const int64_t copied = progress->empty() ? 0 : progress->integer(0, 0);
  const int64_t last_key = progress->empty() ? 0 : progress->integer(0, 1);
  auto rows = pg.query("SELECT count(*), coalesce(max(seq), 0) FROM inbox");
  if (!rows) return copy_error(rows, "reading the target's inbox");
  bool same = rows->integer(0, 0) == copied && rows->integer(0, 1) <= last_key;
  if (same && copied > 0) {
    // The newest delivery copied must be the source's delivery of that seq.
    auto newest = pg.query("SELECT seq, message_id FROM inbox ORDER BY seq DESC LIMIT 1");
    if (!newest) return copy_error(newest, "reading the target's inbox");
    auto lookup = lite.prepare("SELECT message_id FROM inbox WHERE seq = ?1");
    if (!lookup) return copy_error(lookup, "reading the source");
    lookup->bind(1, newest->integer(0, 0));
    std::string source_id;
    auto found = lookup->first_row([&](const sqlite::Statement& s) { source_id = std::string(s.column_text(0)); });
    if (!found) return copy_error(found, "reading the source");
    same = *found && source_id == newest->text(0, 1);
  }
  if (!same) {
    auto words = target_inbox_words(pg);
    if (!words) return pass(words);
    return fail(ErrorKind::data, "the target's inbox holds rows that are not from " + source_name + " (" + *words +
                                     "); migrate never merges two stores");
  }
  return {};
}

void put_u16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xFF));
}
void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}
void put_u64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}
void put_field(std::string& out, std::string_view bytes) {
  put_u32(out, static_cast<uint32_t>(bytes.size()));
  out.append(bytes);
}

// One source row in PostgreSQL's binary COPY format (postgresql.org/docs/15/sql-copy.html,
// "Binary Format"): a field count, then each field's length (-1: NULL) and its bytes in the
// type's binary form: bigint and float8 big-endian, text and bytea as they are, jsonb a
// version byte (1) before its text.
Result<void> encode_row(std::string& out, std::string& scratch, const CopyTable& table, const sqlite::Statement& row) {
  put_u16(out, static_cast<uint16_t>(table.columns.size()));
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const int index = static_cast<int>(c);
    if (row.column_is_null(index)) {
      put_u32(out, 0xFFFFFFFFu);
      continue;
    }
    switch (table.kinds[c]) {
      case CopyKind::integer:
        put_u32(out, 8);
        put_u64(out, static_cast<uint64_t>(row.column_int(index)));
        break;
      case CopyKind::real: {
        const double value = row.column_double(index);
        uint64_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        put_u32(out, 8);
        put_u64(out, bits);
        break;
      }
      case CopyKind::text: put_field(out, row.column_text(index)); break;
      case CopyKind::bytes: put_field(out, row.column_blob(index)); break;
      case CopyKind::json_scalar: {
        // As the PostgreSQL derived writer stores it (pg_statements.h json_scalar), so
        // 72, 72.0 and "72" stay apart as SQLite's typed values keep them.
        rows::SampleValue value;
        switch (row.column_type(index)) {
          case SQLITE_INTEGER: value = row.column_int(index); break;
          case SQLITE_FLOAT: value = row.column_double(index); break;
          case SQLITE_TEXT: value = row.column_text(index); break;
          default:
            return fail(ErrorKind::data, table.name + "." + table.columns[c] + " holds a blob, not a JSON scalar");
        }
        json_scalar(scratch, value);
        put_u32(out, static_cast<uint32_t>(scratch.size() + 1));
        out.push_back('\1');
        out.append(scratch);
        break;
      }
    }
  }
  return {};
}

Error pg_result_error(PGresult* result, PGconn* conn, const std::string& context) {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return {context + ": " + message, state != nullptr ? pg::error_kind(state) : ErrorKind::unavailable};
}

// A COPY … FROM STDIN in progress on `db`: data in chunks, then end() for its result.
class CopyIn {
 public:
  static Result<CopyIn> start(pg::Connection& db, const CopyTable& table) {
    const std::string sql =
        "COPY " + table.name + " (" + joined(table.columns) + ") FROM STDIN (FORMAT binary)";
    PGresult* result = PQexec(db.get(), sql.c_str());
    const bool ok = result != nullptr && PQresultStatus(result) == PGRES_COPY_IN;
    Error error = ok ? Error{} : pg_result_error(result, db.get(), "copying " + table.name);
    PQclear(result);
    if (!ok) return error;
    CopyIn copy(db.get());
    static constexpr char kSignature[] = "PGCOPY\n\377\r\n";
    copy.buffer_.append(kSignature, sizeof kSignature);  // 11 bytes with its NUL
    put_u32(copy.buffer_, 0);  // flags
    put_u32(copy.buffer_, 0);  // header extension length
    return copy;
  }

  CopyIn(CopyIn&& other) noexcept : conn_(other.conn_), buffer_(std::move(other.buffer_)) { other.conn_ = nullptr; }
  CopyIn& operator=(CopyIn&&) = delete;
  // A copy left unfinished (a row that could not be encoded, a failed send) is cancelled,
  // so the connection leaves COPY mode and the batch's transaction can roll back.
  ~CopyIn() {
    if (conn_ == nullptr) return;
    if (PQputCopyEnd(conn_, "migrate stopped") == 1) {
      while (PGresult* result = PQgetResult(conn_)) PQclear(result);
    }
  }

  std::string& buffer() { return buffer_; }

  Result<void> flush_if_big() {
    if (buffer_.size() < kChunk) return {};
    return flush();
  }

  Result<void> end() {
    put_u16(buffer_, 0xFFFF);  // trailer
    if (auto sent = flush(); !sent) return sent;
    if (PQputCopyEnd(conn_, nullptr) != 1) return pg_result_error(nullptr, conn_, "ending a copy");
    PGconn* conn = std::exchange(conn_, nullptr);
    Result<void> outcome;
    while (PGresult* result = PQgetResult(conn)) {
      if (outcome && PQresultStatus(result) != PGRES_COMMAND_OK) outcome = pg_result_error(result, conn, "copying");
      PQclear(result);
    }
    return outcome;
  }

 private:
  static constexpr size_t kChunk = 1 << 20;
  explicit CopyIn(PGconn* conn) : conn_(conn) {}
  Result<void> flush() {
    if (!buffer_.empty() && PQputCopyData(conn_, buffer_.data(), static_cast<int>(buffer_.size())) != 1) {
      return pg_result_error(nullptr, conn_, "sending rows");
    }
    buffer_.clear();
    return {};
  }
  PGconn* conn_;
  std::string buffer_;
};

class SqliteCopier {
 public:
  SqliteCopier(sqlite::Connection& lite, pg::Connection& pg, const SqliteCopyOptions& options)
      : lite_(lite), pg_(pg), options_(options) {}

  // Copies what is left of `table`. False when stop_after_batches was reached.
  Result<bool> copy_table(const CopyTable& table, SqliteCopySummary& summary) {
    auto progress = read_progress(table.name);
    if (!progress) return pass(progress);
    CopyProgress done = *progress;
    const auto started = std::chrono::steady_clock::now();
    options_.report(table.name + ": " + std::to_string(table.source_rows) + " rows" +
                    (done.rows_copied > 0 ? " (" + std::to_string(done.rows_copied) + " copied before)" : ""));
    if (done.rows_copied >= table.source_rows) return true;

    std::string sql = "SELECT " + joined(table.columns) + " FROM " + table.name;
    if (table.integer_key_column >= 0 && done.last_key) sql += " WHERE " + table.key[0] + " > ?1";
    sql += " ORDER BY " + joined(table.key);
    if (table.integer_key_column < 0 && done.rows_copied > 0) sql += " LIMIT -1 OFFSET ?1";
    auto rows = lite_.prepare(sql);
    if (!rows) return copy_error(rows, "reading " + table.name);
    if (table.integer_key_column >= 0 && done.last_key) rows->bind(1, *done.last_key);
    if (table.integer_key_column < 0 && done.rows_copied > 0) rows->bind(1, done.rows_copied);

    auto last_report = started;
    std::string scratch;
    bool more = true;
    while (more) {
      // One batch: one transaction with its rows and its progress row.
      auto transaction = pg::Transaction::begin(pg_);
      if (!transaction) return copy_error(transaction, "copying " + table.name);
      auto copy = CopyIn::start(pg_, table);
      if (!copy) return pass(copy);
      int64_t batch_rows = 0;
      size_t batch_bytes = 0;
      while (batch_rows < options_.batch_rows && batch_bytes < static_cast<size_t>(options_.batch_bytes)) {
        auto has_row = rows->step();
        if (!has_row) return copy_error(has_row, "reading " + table.name);
        if (!*has_row) {
          more = false;
          break;
        }
        const size_t before = copy->buffer().size();
        if (auto encoded = encode_row(copy->buffer(), scratch, table, *rows); !encoded) return pass(encoded);
        batch_bytes += copy->buffer().size() - before;
        if (table.integer_key_column >= 0) done.last_key = rows->column_int(table.integer_key_column);
        ++batch_rows;
        if (auto sent = copy->flush_if_big(); !sent) return pass(sent);
      }
      if (auto ended = copy->end(); !ended) return pass(ended);
      if (batch_rows == 0) break;  // the transaction rolls back: nothing to record
      done.rows_copied += batch_rows;
      auto recorded = pg_.query("UPDATE " + std::string(kProgressTable) +
                                    " SET rows_copied = $2, last_key = $3 WHERE table_name = $1",
                                pg::Params().add(table.name).add(done.rows_copied).add(done.last_key));
      if (!recorded) return copy_error(recorded, "recording the copy's progress");
      if (auto committed = transaction->commit(); !committed) return copy_error(committed, "copying " + table.name);
      summary.rows_copied += batch_rows;
      ++batches_;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_report >= std::chrono::seconds(2)) {
        options_.report(table.name + ": " + std::to_string(done.rows_copied) + "/" + std::to_string(table.source_rows) +
                        " rows");
        last_report = now;
      }
      if (options_.stop_after_batches > 0 && batches_ >= options_.stop_after_batches) return false;
    }
    rows->reset();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.1f s", seconds);
    options_.report(table.name + ": " + std::to_string(done.rows_copied) + "/" + std::to_string(table.source_rows) +
                    " rows copied, " + elapsed);
    if (done.rows_copied != table.source_rows) {
      return fail(ErrorKind::data, table.name + ": copied " + std::to_string(done.rows_copied) + " rows of " +
                                       std::to_string(table.source_rows));
    }
    return true;
  }

 private:
  Result<CopyProgress> read_progress(const std::string& table) {
    auto rows = pg_.query("SELECT rows_copied, last_key FROM " + std::string(kProgressTable) + " WHERE table_name = $1",
                          pg::Params().add(table));
    if (!rows) return copy_error(rows, "reading the copy's progress");
    if (rows->empty()) return fail(ErrorKind::data, "the copy's progress has no row for " + table);
    return CopyProgress{rows->integer(0, 0), rows->optional_integer(0, 1)};
  }

  sqlite::Connection& lite_;
  pg::Connection& pg_;
  const SqliteCopyOptions& options_;
  int64_t batches_ = 0;
};

// After every table: the processor's position, and each sequence past the copied maxima
// (and past SQLite's AUTOINCREMENT high-water mark: an outbox id is never handed out twice).
Result<void> finish_copy(sqlite::Connection& lite, pg::Connection& pg, const std::vector<CopyTable>& tables) {
  auto applied = lite_int(lite, "SELECT applied_seq FROM processor_state WHERE id = 1");
  if (!applied) return pass(applied);
  auto has_autoincrement = lite_int(lite, "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_sequence'");
  if (!has_autoincrement) return pass(has_autoincrement);
  auto transaction = pg::Transaction::begin(pg);
  if (!transaction) return copy_error(transaction, "finishing the copy");
  if (auto set = pg.query("UPDATE processor_state SET applied_seq = $1 WHERE id = 1", pg::Params().add(*applied));
      !set) {
    return copy_error(set, "finishing the copy");
  }
  // With the sequences below, in one commit: the target opens as a store from then on.
  if (auto unmarked = pg.query("DELETE FROM " + std::string(kProgressTable) + " WHERE table_name = $1",
                               pg::Params().add(kCopyUnfinishedMark));
      !unmarked) {
    return copy_error(unmarked, "finishing the copy");
  }
  for (const CopyTable& table : tables) {
    if (table.integer_key_column < 0) continue;
    const std::string& key = table.key[0];
    auto sequence = pg.query("SELECT pg_get_serial_sequence($1, $2)", pg::Params().add(table.name).add(key));
    if (!sequence) return copy_error(sequence, "finishing the copy");
    if (sequence->is_null(0, 0)) continue;  // delivery_outcomes, removed_bodies: keys of other rows
    auto copied_max = pg_int(pg, "SELECT coalesce(max(" + key + "), 0) FROM " + table.name);
    if (!copied_max) return pass(copied_max);
    int64_t high = *copied_max;
    if (*has_autoincrement > 0) {
      auto mark = lite_int(lite, "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = '" + table.name + "'");
      if (!mark) return pass(mark);
      high = std::max(high, *mark);
    }
    if (high <= 0) continue;  // an empty table: the sequence starts at 1 as it is
    auto set = pg.query("SELECT setval($1, $2)", pg::Params().add(sequence->text(0, 0)).add(high));
    if (!set) return copy_error(set, "setting " + std::string(sequence->text(0, 0)));
  }
  if (auto committed = transaction->commit(); !committed) return copy_error(committed, "finishing the copy");
  return {};
}

}  // namespace

Result<SqliteCopySummary> copy_sqlite_to_postgres(const std::string& source_path, const Database& target,
                                                  const SqliteCopyOptions& options) {
  const std::string target_name = loggable_location(target.location);
  // A source of an earlier version gets this version's schema first, as any command of this
  // version would give it (the user columns of migration 009 are filled from its bodies):
  // copied as it was, the target's new columns would stay empty.
  {
    auto existing = open_for_reading(source_path);
    if (!existing) return copy_error(existing, "opening " + source_path);
    auto version = existing->query_int("PRAGMA user_version");
    if (!version) return copy_error(version, "reading " + source_path);
    if (version->value_or(0) < schema_version()) {
      auto writable = open_for_writing(source_path, {});
      if (!writable) return copy_error(writable, "migrating " + source_path);
    }
  }
  auto lite = open_for_reading(source_path);
  if (!lite) return copy_error(lite, "opening " + source_path);
  auto source_lock = ProcessingLock::acquire(*lite);
  if (!source_lock) return fail(source_lock);
  // Not connect_migrated(): that refuses the unfinished copy this run is here to finish.
  auto pg = connect(target);
  if (!pg) return copy_error(pg, "opening " + target_name);
  if (auto migrated = migrate(*pg); !migrated) return copy_error(migrated, "migrating " + target_name);
  // Session level: held until this connection closes (also when the process dies).
  auto locked = pg->query("SELECT pg_try_advisory_lock($1)", pg::Params().add(kProcessingLock));
  if (!locked) return copy_error(locked, "locking " + target_name);
  if (!locked->boolean(0, 0)) {
    return fail(ErrorKind::in_use, target_name + " is being processed by a running healthhook instance (it holds the "
                                               "processing lock); stop every instance serving it first");
  }
  // One snapshot of the source for the whole copy.
  if (auto begun = lite->exec("BEGIN"); !begun) return copy_error(begun, "reading " + source_path);

  // Every table, parents first (series before samples); processor_state is written last.
  std::vector<CopyTable> tables;
  std::set<std::string> known;
  for (const schema::Table& description : schema::tables()) {
    known.insert(std::string(description.name));
    if (!description.copied) continue;
    tables.push_back(plan_table(description));
  }
  // A table of a newer source schema than this list knows is not silently left behind.
  auto source_tables = lite->prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  if (!source_tables) return copy_error(source_tables, "reading " + source_path);
  std::string unknown;
  auto listed = source_tables->for_each_row([&](const sqlite::Statement& row) {
    if (!known.contains(std::string(row.column_text(0)))) unknown += " " + std::string(row.column_text(0));
  });
  if (!listed) return copy_error(listed, "reading " + source_path);
  if (!unknown.empty()) return fail(ErrorKind::data, "the source has tables migrate does not know:" + unknown);
  // Entries a sender has yet to make (store/outbox.h) are not copied: PostgreSQL's writer
  // makes only those of what it stores and applies itself.
  auto unmade = lite_int(*lite, "SELECT count(*) FROM forward_backlog WHERE writer_makes = 0 AND after_seq < bound");
  if (!unmade) return pass(unmade);
  if (*unmade > 0) {
    return fail(ErrorKind::data,
                "forwarding has deliveries whose outbox entries are not made yet (healthhook_forward_unmade_deliveries "
                "> 0: the backend was behind); run serve until the gauge is 0, then migrate");
  }

  // A store whose rebuild was interrupted would arrive with incomplete tables and no mark
  // (processor_state is written, not copied): finished first, where it is.
  auto unfinished = lite_int(*lite, "SELECT count(*) FROM (" + std::string(kUnfinishedRebuildSql) + ")");
  if (!unfinished) return pass(unfinished);
  if (*unfinished > 0) {
    return fail(ErrorKind::data, std::string(kRebuildUnfinished) + " in " + source_path +
                                     " (a rebuild was interrupted); run `healthhook rebuild` on it, then migrate");
  }

  // The target is marked before the source is counted (minutes on a large one): a copy
  // stopped from here on is refused by every other opener. An empty target only: a store
  // migrate was pointed at by mistake is refused untouched.
  auto started = pg_int(*pg, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1",
                        pg::Params().add(kProgressTable));
  if (!started) return pass(started);
  if (*started == 0) {
    if (auto ok = check_target_empty(*pg, tables, source_path); !ok) return pass(ok);
    if (auto marked = mark_copy_started(*pg); !marked) return pass(marked);
  }
  if (auto counted = count_source_rows(*lite, tables); !counted) return pass(counted);
  auto fingerprint = source_fingerprint(*lite, tables);
  if (!fingerprint) return pass(fingerprint);
  // Progress rows: none when an earlier run stopped while it counted.
  auto resuming = pg_int(*pg, "SELECT count(*) FROM " + std::string(kProgressTable) + " WHERE table_name <> $1",
                         pg::Params().add(kCopyUnfinishedMark));
  if (!resuming) return pass(resuming);
  if (*resuming > 0) {
    if (auto ok = check_target_resumable(*pg, *lite, *fingerprint, source_path); !ok) return pass(ok);
  } else {
    if (auto ok = check_target_empty(*pg, tables, source_path); !ok) return pass(ok);
    auto transaction = pg::Transaction::begin(*pg);
    if (!transaction) return copy_error(transaction, "starting the copy");
    for (const CopyTable& table : tables) {
      auto inserted = pg->query("INSERT INTO " + std::string(kProgressTable) +
                                    " (table_name, rows_copied, source) VALUES ($1, 0, $2)",
                                pg::Params().add(table.name).add(*fingerprint));
      if (!inserted) return copy_error(inserted, "starting the copy");
    }
    if (auto committed = transaction->commit(); !committed) return copy_error(committed, "starting the copy");
  }

  SqliteCopySummary summary;
  SqliteCopier copier(*lite, *pg, options);
  for (const CopyTable& table : tables) {
    ++summary.tables;
    summary.rows_total += table.source_rows;
    auto copied = copier.copy_table(table, summary);
    if (!copied) return pass(copied);
    if (!*copied) {
      summary.stopped = true;
      return summary;
    }
  }
  if (auto finished = finish_copy(*lite, *pg, tables); !finished) return pass(finished);
  (void)lite->exec("COMMIT");
  return summary;
}

}  // namespace hh::store
