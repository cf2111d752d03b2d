#pragma once
// RAII owners for SQLite handles. A Connection is used by one thread at a time
// (the writer thread owns the write connection; each reader opens its own).
#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/result.h"
#include "store/scoped_transaction.h"

namespace hh::sqlite {

class Statement;

enum class OpenMode { read_write_create, read_write, read_only };

// The kind of failure an extended result code means (common/result.h): constraint, type
// and size failures are the data's own (the same on every retry); a lock held elsewhere
// is busy; disk and size-cap failures are full; the rest as named.
ErrorKind error_kind(int extended_code);

// What `path` names when it exists and is no regular file, a link followed ("a folder",
// "a FIFO", "a character device", …); nullopt for a regular file, a name not there yet
// (SQLite creates it), one that cannot be looked at (SQLite's own error then says why) or
// a special name SQLite reads (":memory:"). Looked at with stat() alone: opening a FIFO
// would wait for a writer, and SQLite opened one (and /dev/null) only to fail later with
// "disk I/O error", or hung reading it; as root it left a "-journal" beside the device.
std::optional<std::string_view> not_a_regular_file(const std::string& path);
inline constexpr std::string_view kFolder = "a folder";  // what not_a_regular_file() says of one

class Connection {
 public:
  static Result<Connection> open(const std::string& path, OpenMode mode);

  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;

  // Runs one or more statements without results. Error text names the SQL's first line.
  Result<void> exec(std::string_view sql);
  // Prepares a statement to keep (SQLITE_PREPARE_PERSISTENT): bind, step, reset per use.
  Result<Statement> prepare(std::string_view sql);
  // Runs a query returning one integer (PRAGMA user_version, COUNT(*)); nullopt on no row.
  Result<std::optional<int64_t>> query_int(std::string_view sql);

  // Waits up to `timeout` for a lock another connection holds before a statement fails
  // busy, trying again after 10, 20, 40 … µs, then after a tenth of the time waited so far
  // (at most 20 ms). SQLite's own busy_timeout sleeps 1, 2, 5, 10 … 100 ms between tries:
  // the writer that met the forwarder's short transactions slept a millisecond or more into
  // the acks waiting for its commit (docs/decisions/058-short-waits-for-a-busy-database.md).
  void wait_when_busy(std::chrono::milliseconds timeout);
  std::chrono::milliseconds busy_timeout() const;  // what wait_when_busy() set; 0: none

  // Reads the database once. A connection finds out that the file is in WAL mode, and
  // opens (or creates) the WAL, only when it first reads it: until then a checkpoint
  // through it does nothing and the "-wal" file may not exist.
  Result<void> open_wal();

  int64_t changes() const { return sqlite3_changes64(handle_.get()); }
  int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(handle_.get()); }
  std::string last_error() const { return sqlite3_errmsg(handle_.get()); }
  int last_error_code() const { return sqlite3_extended_errcode(handle_.get()); }
  sqlite3* get() const { return handle_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const {
      sqlite3_busy_handler(db, nullptr, nullptr);  // its state may already be gone (a move-assignment)
      sqlite3_close_v2(db);
    }
  };
  explicit Connection(sqlite3* db) : handle_(db) {}
  // wait_when_busy()'s state, where SQLite's busy handler finds it.
  struct BusyWait;
  struct BusyWaitDeleter {
    void operator()(BusyWait* wait) const;
  };
  std::unique_ptr<BusyWait, BusyWaitDeleter> busy_wait_;
  std::unique_ptr<sqlite3, Closer> handle_;
};

class Statement {
 public:
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;

  // Binding: parameters are 1-based as in SQLite. Text and blobs are copied
  // (SQLITE_TRANSIENT) unless bind_*_static is used, whose data must stay live until
  // the next reset().
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind_static(int index, std::string_view text);
  Statement& bind_blob(int index, std::span<const char> bytes);
  Statement& bind_blob_static(int index, std::span<const char> bytes);
  Statement& bind_null(int index);
  Statement& bind(int index, const std::optional<int64_t>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind(int index, const std::optional<double>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind(int index, const std::optional<std::string_view>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind(int index, const std::optional<std::string>& value) {
    return value ? bind(index, std::string_view(*value)) : bind_null(index);
  }
  // Any text bound with bind()/bind_static() that SQLite rejected (too big) shows up here.
  bool bind_failed() const { return bind_error_ != SQLITE_OK; }

  // One step: true when a row is available, false when done.
  Result<bool> step();
  // Steps to completion, ignoring rows, then resets.
  Result<void> run();
  // Steps through every row, calling `on_row(statement)` for each, then resets. `on_row`
  // returns void, or Result<void> to stop early with an error (returned, after a reset).
  template <typename OnRow>
  Result<void> for_each_row(OnRow&& on_row);
  // One step: calls `on_row(statement)` when there is a row, then resets either way
  // (for lookups of one row). True when there was a row.
  template <typename OnRow>
  Result<bool> first_row(OnRow&& on_row);
  void reset();

  bool column_is_null(int index) const { return sqlite3_column_type(handle_.get(), index) == SQLITE_NULL; }
  int64_t column_int(int index) const { return sqlite3_column_int64(handle_.get(), index); }
  double column_double(int index) const { return sqlite3_column_double(handle_.get(), index); }
  int column_type(int index) const { return sqlite3_column_type(handle_.get(), index); }
  // Valid until the next step/reset.
  std::string_view column_text(int index) const;
  std::string_view column_blob(int index) const;
  std::optional<std::string_view> column_optional_text(int index) const {
    if (column_is_null(index)) return std::nullopt;
    return column_text(index);
  }
  std::optional<int64_t> column_optional_int(int index) const {
    if (column_is_null(index)) return std::nullopt;
    return column_int(index);
  }
  std::optional<double> column_optional_double(int index) const {
    if (column_is_null(index)) return std::nullopt;
    return column_double(index);
  }
  // A 0/1 flag column: false for 0, true for any other integer.
  std::optional<bool> column_optional_bool(int index) const {
    if (column_is_null(index)) return std::nullopt;
    return column_int(index) != 0;
  }
  sqlite3_stmt* get() const { return handle_.get(); }

 private:
  friend class Connection;
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
  };
  explicit Statement(sqlite3_stmt* stmt) : handle_(stmt) {}
  void note_bind(int rc) {
    if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  }
  std::unique_ptr<sqlite3_stmt, Finalizer> handle_;
  int bind_error_ = SQLITE_OK;
};

template <typename OnRow>
Result<void> Statement::for_each_row(OnRow&& on_row) {
  for (;;) {
    auto has_row = step();  // resets on an error
    if (!has_row) return fail(has_row);
    if (!*has_row) break;
    const Statement& row = *this;
    if constexpr (std::is_void_v<std::invoke_result_t<OnRow&, const Statement&>>) {
      on_row(row);
    } else if (Result<void> done = on_row(row); !done) {
      reset();
      return done;
    }
  }
  reset();
  return {};
}

template <typename OnRow>
Result<bool> Statement::first_row(OnRow&& on_row) {
  auto has_row = step();  // resets on an error
  if (!has_row) return fail(has_row);
  if (*has_row) on_row(static_cast<const Statement&>(*this));
  reset();
  return *has_row;
}

// How SQLite runs a scoped transaction (store/scoped_transaction.h). BEGIN IMMEDIATE takes
// the write lock now, so a busy database fails here, not later; a COMMIT that failed (busy,
// full) leaves the transaction open, to be rolled back.
struct TransactionEngine {
  using Connection = sqlite::Connection;
  static Result<void> begin(Connection& db) { return db.exec("BEGIN IMMEDIATE"); }
  static Result<void> commit(Connection& db) { return db.exec("COMMIT"); }
  static void rollback(Connection& db) { (void)db.exec("ROLLBACK"); }
  static constexpr bool kOpenAfterFailedCommit = true;
};
using Transaction = store::ScopedTransaction<TransactionEngine>;

}  // namespace hh::sqlite
