#pragma once
// RAII owners for libpq handles, the PostgreSQL counterpart of store/sqlite/connection.h.
// A Connection is used by one thread at a time. Statements use the extended protocol with
// parameters ($1, $2, …) sent apart from the SQL, in text format except bytea values
// (Params::bytes, binary: no escaping of bodies). Results come back in text format, or in
// binary where a caller asks (Results::binary: bodies without hex decoding); Rows reads
// integers and bytes in either.
//
// Group commits are one round trip: Pipeline sends BEGIN, the statements and COMMIT
// together and reads every result after one sync (libpq pipeline mode, PostgreSQL 14+).
//
// A connection may be opened with a reply timeout (the read side of the listener: the read
// API, the console, /metrics): then the connection attempt and each statement's answer
// are waited for at most that long (libpq's own calls wait as long as the server takes,
// and a frozen server never answers). A statement not answered in time leaves the
// connection in an unknown state (the server may still run it, or answer it later): the
// connection is closed, the call fails as unavailable, and every later call fails at once
// until a new connection replaces it. (Not PQcancel: libpq 15's cancel request itself
// waits, without a bound, for the server to close it, and a frozen server never does.)
#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/scoped_transaction.h"

namespace hh::pg {

// The format of a statement's result columns: text, or binary (bytea as raw bytes, bigint
// as 8 bytes big-endian; only for columns of those types and text).
enum class Results { text, binary };

// The kind of failure a SQLSTATE means (common/result.h): integrity and data exceptions
// (classes 23, 22) are the data's own; serialization failures, deadlocks, lock and
// statement timeouts are busy; disk full and out of resources are full; connection
// failures and shutdowns are unavailable.
ErrorKind error_kind(std::string_view sqlstate);

// One statement's parameters, in order ($1 is the first added). Text is not copied: the
// viewed bytes must stay alive until the statement has been sent. Numbers (and text that
// needed a terminating NUL) are kept here: a copy of a Params points at its own.
class Params {
 public:
  Params() = default;
  Params(const Params& other);
  Params(Params&&) noexcept = default;
  Params& operator=(const Params&) = delete;
  Params& operator=(Params&&) noexcept = default;

  Params& add(int64_t value);
  Params& add(double value);
  Params& add(std::string_view text);
  Params& add(const char* text) { return add(std::string_view(text)); }
  // A std::string ends in a NUL: sent without a copy (it must outlive the statement); a
  // temporary one is kept here.
  Params& add(const std::string& text) { return push(text.c_str(), text.size(), 0); }
  Params& add(std::string&& text) { return push_owned(std::move(text)); }
  Params& add_null();
  // A bytea value, sent in binary format (no escaping, no copy).
  Params& bytes(std::string_view data);
  template <typename T>
  Params& add(const std::optional<T>& value) {
    return value ? add(*value) : add_null();
  }

  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  Params& push(const char* data, size_t size, int format);
  Params& push_owned(std::string text);
  std::vector<const char*> values_;
  std::vector<int> owned_index_;  // per value: its string in owned_, or -1 (the caller's bytes)
  std::vector<int> lengths_;
  std::vector<int> formats_;
  std::deque<std::string> owned_;  // numbers as text; a deque keeps their addresses stable
};

// A statement's result: rows and columns in text format, NULL told apart.
class Rows {
 public:
  Rows() = default;
  int size() const { return result_ ? PQntuples(result_.get()) : 0; }
  bool empty() const { return size() == 0; }
  bool is_null(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  // Text, or the raw bytes of a bytea column in a binary result.
  std::string_view text(int row, int column) const {
    return {PQgetvalue(result_.get(), row, column),
            static_cast<size_t>(PQgetlength(result_.get(), row, column))};
  }
  std::optional<std::string_view> optional_text(int row, int column) const {
    if (is_null(row, column)) return std::nullopt;
    return text(row, column);
  }
  int64_t integer(int row, int column) const;
  std::optional<int64_t> optional_integer(int row, int column) const {
    if (is_null(row, column)) return std::nullopt;
    return integer(row, column);
  }
  double real(int row, int column) const;
  // A boolean column ("t"/"f").
  bool boolean(int row, int column) const { return text(row, column) == "t"; }
  // Rows changed by an INSERT/UPDATE/DELETE without RETURNING.
  int64_t affected() const;
  PGresult* get() const { return result_.get(); }

 private:
  friend class Connection;
  friend class Pipeline;
  struct Clear {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  explicit Rows(PGresult* result) : result_(result) {}
  std::unique_ptr<PGresult, Clear> result_;
};

class Connection {
 public:
  // `uri`: a libpq connection URI or key=value string. `password`, when not empty, is
  // passed apart from it (from a secret file: never in argv or a log line). Errors never
  // repeat the URI, which may hold a password.
  // `reply_timeout` above zero: the attempt and every answer are waited for at most this
  // long (above).
  static Result<Connection> open(const std::string& uri, const std::string& password = {},
                                 std::chrono::milliseconds reply_timeout = std::chrono::milliseconds(0));

  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;

  // Runs one or more statements without parameters (simple protocol).
  Result<void> exec(std::string_view sql);
  // A session setting (SET …): run now, and again on every reconnect.
  Result<void> set_session(std::string sql);
  // Runs one statement with parameters.
  Result<Rows> query(std::string_view sql, const Params& params = {}, Results format = Results::text);
  // Prepares a named statement for run(); names are per connection. Preparing a name again
  // with the same SQL does nothing; statements are prepared again on every reconnect.
  Result<void> prepare(const std::string& name, std::string_view sql);
  Result<Rows> run(const std::string& name, const Params& params = {}, Results format = Results::text);
  // A query returning one integer; nullopt for no row or NULL.
  Result<std::optional<int64_t>> query_int(std::string_view sql, const Params& params = {});

  // A connection that broke (the server restarted, the network dropped it) is opened
  // again, with its session settings and prepared statements. Call only where no
  // transaction of this connection can be open (what it held is gone: its transaction,
  // its session locks). Does nothing while the connection is fine.
  Result<void> reconnect_if_broken();
  // How many times reconnect_if_broken() opened the connection again: session locks taken
  // before that are gone.
  uint64_t generation() const { return generation_; }

  // The server's backend process id (pg_backend_pid()), for logs and tests; 0 once closed.
  int backend_pid() const { return PQbackendPID(handle_.get()); }
  // False once the connection broke (the server went away) or was closed for an answer
  // that did not come in time: open a new one.
  bool is_open() const { return PQstatus(handle_.get()) == CONNECTION_OK; }
  // True when the last call on this connection closed it because the server did not answer
  // within the reply timeout (so a caller does not at once wait as long again to reconnect).
  bool gave_up_waiting() const { return gave_up_waiting_; }
  PGconn* get() const { return handle_.get(); }
  // The SQLSTATE of the last statement that failed on the server ("23505": a unique
  // violation; of a Pipeline, the first that failed), empty when libpq itself failed: for a
  // caller that must tell one data error from another.
  std::string_view last_sqlstate() const { return last_sqlstate_; }

 private:
  friend class Pipeline;
  struct Finish {
    void operator()(PGconn* c) const { PQfinish(c); }
  };
  explicit Connection(PGconn* conn) : handle_(conn) {}
  using Clock = std::chrono::steady_clock;
  Result<Rows> take(PGresult* result, std::string_view what);
  bool bounded() const { return reply_timeout_.count() > 0; }
  // With a reply timeout: the results of a statement `sent` (the PQsend… call's return), as
  // PQexec would return them, waited for until the timeout.
  Result<Rows> bounded_results(int sent, std::string_view what);
  // Until a result can be read without waiting (what was queued is sent), or `deadline`:
  // then the connection is closed and the error says so.
  Result<void> await_result(Clock::time_point deadline, std::string_view what);
  Error give_up(std::string_view what);
  // The error a failed `result` means (null: libpq itself failed), its SQLSTATE kept for
  // last_sqlstate().
  Error failure(const PGresult* result, std::string_view what);
  std::unique_ptr<PGconn, Finish> handle_;
  std::vector<std::string> session_;                        // set_session() statements
  std::vector<std::pair<std::string, std::string>> prepared_;  // name, SQL
  uint64_t generation_ = 0;
  std::chrono::milliseconds reply_timeout_{0};  // 0: libpq's calls, waiting as long as the server takes
  bool gave_up_waiting_ = false;
  bool restore_pending_ = false;  // reopened, its settings or statements not all back yet; or stuck in pipeline mode
  std::string last_sqlstate_;
};

// Statements sent together and answered after one sync: one round trip for all of them.
// If one fails, PostgreSQL skips the rest up to the sync, and finish() returns the first
// error. Holds the connection in pipeline mode until finish() (or destruction), after
// which the connection takes synchronous statements again.
class Pipeline {
 public:
  static Result<Pipeline> begin(Connection& db);
  Pipeline(Pipeline&& other) noexcept : db_(other.db_), sent_(other.sent_) { other.db_ = nullptr; }
  Pipeline& operator=(Pipeline&&) = delete;
  ~Pipeline();

  // Queues a statement: SQL with parameters, or a prepared statement by name.
  Result<void> send(std::string_view sql, const Params& params = {});
  Result<void> send_prepared(const std::string& name, const Params& params = {}, Results format = Results::text);
  // Syncs and reads the results of every statement sent, in order; once.
  Result<std::vector<Rows>> finish();

 private:
  explicit Pipeline(Connection* db) : db_(db) {}
  Connection* db_;
  int sent_ = 0;
};

// How PostgreSQL runs a scoped transaction (store/scoped_transaction.h). A COMMIT that
// failed has ended the transaction; one that answers ROLLBACK (an earlier error aborted
// it) is a failure too.
struct TransactionEngine {
  using Connection = pg::Connection;
  static Result<void> begin(Connection& db) { return db.exec("BEGIN"); }
  static Result<void> commit(Connection& db);
  static void rollback(Connection& db) { (void)db.exec("ROLLBACK"); }
  static constexpr bool kOpenAfterFailedCommit = false;
};
using Transaction = store::ScopedTransaction<TransactionEngine>;

}  // namespace hh::pg
