#include "store/postgres/connection.h"

#include <poll.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>

namespace hh::pg {
namespace {

// How long a connection attempt may take, unless the URI says (connect_timeout).
constexpr const char* kConnectTimeoutSeconds = "10";
// How soon a TCP connection to a server that has gone without a FIN (its host powered
// off or cut off, a failed-over address) fails, unless the URI says: keepalive probes
// after 30 s of silence, every 10 s, 3 unanswered ones end it (about a minute), and sent
// data unacknowledged for 60 s ends it too (tcp_user_timeout, milliseconds). The system's
// default is two hours of silence before the first probe, and a session blocked reading
// a reply meanwhile (the writer's, with acks waiting; the processing leader's) would not
// reconnect. Not used on a Unix socket.
constexpr const char* kKeepalivesIdleSeconds = "30";
constexpr const char* kKeepalivesIntervalSeconds = "10";
constexpr const char* kKeepalivesCount = "3";
constexpr const char* kTcpUserTimeoutMs = "60000";

// libpq's message on one line: it ends with a newline and may hold more ("connection
// refused\n\tIs the server running on that host…"), and an error is one line in the log
// and on a terminal.
std::string trimmed(const char* message) {
  std::string text;
  for (const char* c = message ? message : ""; *c != '\0'; ++c) {
    if (*c == '\n' || *c == '\r' || *c == '\t') {
      if (!text.empty() && text.back() != ' ') text.push_back(' ');
    } else {
      text.push_back(*c);
    }
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// The start of the SQL, to name a failing statement without its whole text: its first
// line, at most 60 bytes of it (a one-line statement of 900 characters made the log
// line of a lost session mostly SQL; black-box pass).
std::string statement_name(std::string_view sql) {
  constexpr size_t kLongest = 60;
  const size_t end = sql.find('\n');
  std::string_view line = sql.substr(0, end == std::string_view::npos ? sql.size() : end);
  if (line.size() <= kLongest) return std::string(line);
  line = line.substr(0, kLongest);
  while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) line.remove_suffix(1);
  if (!line.empty() && static_cast<unsigned char>(line.back()) >= 0xC0) line.remove_suffix(1);  // a cut lead byte
  return std::string(line) + "…";
}

// libpq's words for a connection the server closed ("server closed the connection
// unexpectedly This probably means the server terminated abnormally…") blame a crash;
// most often the server ended the session on purpose (idle_session_timeout, which ends a
// frozen instance's session, pg_terminate_backend, a restart) or the network broke.
// What the server said before it closed (e.g. "FATAL: terminating connection due to
// idle-session timeout") is kept; only libpq's phrase and its guess are replaced.
std::string lost_connection_message(std::string message) {
  const size_t phrase = message.find("server closed the connection unexpectedly");
  if (phrase == std::string::npos) return message;
  std::string said = message.substr(0, phrase);
  while (!said.empty() && said.back() == ' ') said.pop_back();
  const std::string closed =
      "the server closed the connection (it ended this session, as it does after idle_session_timeout or "
      "pg_terminate_backend, or restarted, or the network broke)";
  return said.empty() ? closed : said + "; " + closed;
}

bool succeeded(const PGresult* result) {
  const ExecStatusType status = PQresultStatus(result);
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

// A call on a connection closed for an answer that did not come in time (connection.h).
Error closed(std::string_view what) {
  return fail(ErrorKind::unavailable,
              std::string(what) + ": the connection was closed after PostgreSQL did not answer in time");
}

// Until the connection's socket is ready for `events` (or failed: libpq finds out what
// happened), false when `deadline` passed first.
bool wait_for_socket(PGconn* conn, short events, std::chrono::steady_clock::time_point deadline) {
  const int fd = PQsocket(conn);
  if (fd < 0) return true;  // no socket: the next libpq call fails and says why
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd socket{fd, events, 0};
    const int ready = ::poll(&socket, 1, static_cast<int>(std::min<int64_t>(left.count(), INT_MAX)));
    if (ready > 0 || (ready < 0 && errno != EINTR)) return true;
  }
}

// Drives a connection begun by PQconnectStartParams until it is made or has failed (its
// PQstatus says which); false when `deadline` passed first. (libpq's connect_timeout applies
// only to its blocking connect.)
bool connect_until(PGconn* conn, std::chrono::steady_clock::time_point deadline) {
  PostgresPollingStatusType state = PGRES_POLLING_WRITING;  // libpq's documented first wait
  while (state != PGRES_POLLING_OK && state != PGRES_POLLING_FAILED) {
    if (!wait_for_socket(conn, state == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline)) return false;
    state = PQconnectPoll(conn);
  }
  return true;
}

}  // namespace

ErrorKind error_kind(std::string_view sqlstate) {
  if (sqlstate.size() != 5) return ErrorKind::other;
  const std::string_view cls = sqlstate.substr(0, 2);
  if (cls == "22" || cls == "23") return ErrorKind::data;
  // 40001 serialization failure, 40P01 deadlock, 55P03 lock not available, 57014 canceled
  // (statement_timeout, lock_timeout).
  if (cls == "40" || sqlstate == "55P03" || sqlstate == "57014") return ErrorKind::busy;
  if (cls == "53") return ErrorKind::full;  // disk full, out of memory, too many connections
  if (cls == "08" || cls == "57" || cls == "3D" || cls == "28") return ErrorKind::unavailable;
  if (cls == "58") return ErrorKind::io;
  return ErrorKind::other;
}

Params::Params(const Params& other)
    : owned_index_(other.owned_index_), lengths_(other.lengths_), formats_(other.formats_), owned_(other.owned_) {
  values_.reserve(other.values_.size());
  for (size_t i = 0; i < other.values_.size(); ++i) {
    const int owned = owned_index_[i];
    values_.push_back(owned < 0 ? other.values_[i] : owned_[static_cast<size_t>(owned)].c_str());
  }
}

Params& Params::push(const char* data, size_t size, int format) {
  values_.push_back(data);
  lengths_.push_back(static_cast<int>(size));
  formats_.push_back(format);
  owned_index_.push_back(-1);
  return *this;
}

Params& Params::push_owned(std::string text) {
  const std::string& kept = owned_.emplace_back(std::move(text));
  push(kept.c_str(), kept.size(), 0);
  owned_index_.back() = static_cast<int>(owned_.size() - 1);
  return *this;
}

Params& Params::add(int64_t value) { return push_owned(std::to_string(value)); }

Params& Params::add(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest exact form
  return push_owned(std::string(buffer, ec == std::errc() ? end : buffer));
}

// libpq reads a text parameter up to its NUL (the lengths count for binary ones only), so
// text is copied here with one; binding a view saves nothing worth reading past its end.
Params& Params::add(std::string_view text) { return push_owned(std::string(text)); }

Params& Params::add_null() { return push(nullptr, 0, 0); }

Params& Params::bytes(std::string_view data) { return push(data.empty() ? "" : data.data(), data.size(), 1); }

int64_t Rows::integer(int row, int column) const {
  const std::string_view t = text(row, column);
  if (PQfformat(result_.get(), column) == 1) {  // binary: big-endian, 8 bytes (int4: 4)
    uint64_t value = 0;
    for (char c : t) value = (value << 8) | static_cast<unsigned char>(c);
    if (t.size() == 4) return static_cast<int32_t>(static_cast<uint32_t>(value));
    return static_cast<int64_t>(value);
  }
  int64_t value = 0;
  std::from_chars(t.data(), t.data() + t.size(), value);
  return value;
}

double Rows::real(int row, int column) const {
  const std::string_view t = text(row, column);
  double value = 0;
  std::from_chars(t.data(), t.data() + t.size(), value);
  return value;
}

int64_t Rows::affected() const {
  const char* n = result_ ? PQcmdTuples(result_.get()) : "";
  int64_t value = 0;
  std::from_chars(n, n + std::char_traits<char>::length(n), value);
  return value;
}

Result<Connection> Connection::open(const std::string& uri, const std::string& password,
                                    std::chrono::milliseconds reply_timeout) {
  // expand_dbname: `dbname` holds the whole URI; the password goes beside it. Keywords
  // before `dbname` are defaults the URI may override: connect_timeout, because libpq waits
  // forever by default, and a connect (or a reconnect on the writer thread, with acks
  // waiting) to a server that accepts and never answers would never fail; the keepalives
  // and tcp_user_timeout, for a server gone without closing (above).
  const char* keys[] = {"connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
                        "tcp_user_timeout", "dbname", "fallback_application_name",
                        password.empty() ? nullptr : "password", nullptr};
  const char* values[] = {kConnectTimeoutSeconds, kKeepalivesIdleSeconds, kKeepalivesIntervalSeconds,
                          kKeepalivesCount, kTcpUserTimeoutMs, uri.c_str(), "healthhook", password.c_str(),
                          nullptr};
  const bool bounded = reply_timeout.count() > 0;
  Connection db(bounded ? PQconnectStartParams(keys, values, 1) : PQconnectdbParams(keys, values, 1));
  if (!db.handle_) return fail(ErrorKind::unavailable, "PostgreSQL: out of memory");
  db.reply_timeout_ = reply_timeout;
  if (bounded && PQstatus(db.get()) != CONNECTION_BAD && !connect_until(db.get(), Clock::now() + reply_timeout)) {
    return fail(ErrorKind::unavailable, "PostgreSQL: cannot connect: no answer within " +
                                            std::to_string(reply_timeout.count()) + " ms");
  }
  if (PQstatus(db.get()) != CONNECTION_OK) {
    return fail(ErrorKind::unavailable, "PostgreSQL: cannot connect: " + trimmed(PQerrorMessage(db.get())));
  }
  // Bounded: sending never waits either (a statement too large for the socket's buffer is
  // sent as the server takes it, within the same timeout).
  if (bounded && PQsetnonblocking(db.get(), 1) != 0) {
    return fail(ErrorKind::unavailable, "PostgreSQL: nonblocking mode: " + trimmed(PQerrorMessage(db.get())));
  }
  // Notices (e.g. "relation already exists, skipping") would go to stderr unasked.
  PQsetNoticeProcessor(db.get(), [](void*, const char*) {}, nullptr);
  return db;
}

Error Connection::failure(const PGresult* result, std::string_view what) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  last_sqlstate_.assign(state ? state : "");
  PGconn* conn = get();
  const std::string message = trimmed(result ? PQresultErrorMessage(result) : PQerrorMessage(conn));
  // No SQLSTATE: libpq itself failed (the connection broke).
  const ErrorKind kind = state ? error_kind(state) : ErrorKind::unavailable;
  std::string said = message.empty() ? trimmed(PQerrorMessage(conn)) : message;
  if (!state) said = lost_connection_message(std::move(said));
  return fail(kind, std::string(what) + ": " + said);
}

Result<Rows> Connection::take(PGresult* result, std::string_view what) {
  Rows rows(result);
  if (!result || !succeeded(result)) return failure(result, what);
  return rows;
}

Result<Rows> Connection::bounded_results(int sent, std::string_view what) {
  gave_up_waiting_ = false;
  if (!handle_) return closed(what);
  if (sent != 1) return failure(nullptr, what);
  const auto deadline = Clock::now() + reply_timeout_;
  Rows last;
  for (;;) {
    if (auto ready = await_result(deadline, what); !ready) return fail(ready);
    PGresult* result = PQgetResult(get());
    if (result == nullptr) break;
    // What PQexec returns: the last result, or the error that ended the statements.
    if (last.get() != nullptr && !succeeded(last.get())) {
      PQclear(result);
      continue;
    }
    last = Rows(result);
  }
  if (last.get() == nullptr || !succeeded(last.get())) return failure(last.get(), what);
  return last;
}

Result<void> Connection::await_result(Clock::time_point deadline, std::string_view what) {
  PGconn* conn = get();
  for (;;) {
    const int unsent = PQflush(conn);  // nonblocking: 1 while part of what was sent is still queued
    if (unsent < 0) return failure(nullptr, what);
    if (unsent == 0 && PQisBusy(conn) == 0) return {};
    if (!wait_for_socket(conn, unsent > 0 ? POLLIN | POLLOUT : POLLIN, deadline)) return give_up(what);
    // A connection that broke has its error (the server's last message, if any) read by
    // PQgetResult, which no longer waits for anything.
    if (PQconsumeInput(conn) != 1) {
      if (PQstatus(conn) == CONNECTION_BAD) return {};
      return failure(nullptr, what);
    }
  }
}

Error Connection::give_up(std::string_view what) {
  // Closed, not reused: the statement may still run, or be answered later. The server ends
  // the backend when it next reads from or writes to the closed socket.
  handle_.reset();
  gave_up_waiting_ = true;
  last_sqlstate_.clear();
  return fail(ErrorKind::unavailable, std::string(what) + ": PostgreSQL did not answer within " +
                                          std::to_string(reply_timeout_.count()) + " ms (the connection was closed)");
}

Result<void> Connection::exec(std::string_view sql) {
  const std::string text(sql);
  auto done = bounded() ? bounded_results(PQsendQuery(get(), text.c_str()), statement_name(sql))
                        : take(PQexec(get(), text.c_str()), statement_name(sql));
  if (!done) return fail(done);
  return {};
}

Result<Rows> Connection::query(std::string_view sql, const Params& params, Results format) {
  const std::string text(sql);
  const int result_format = format == Results::binary ? 1 : 0;
  if (bounded()) {
    return bounded_results(PQsendQueryParams(get(), text.c_str(), params.size(), nullptr, params.values(),
                                             params.lengths(), params.formats(), result_format),
                           statement_name(sql));
  }
  return take(PQexecParams(get(), text.c_str(), params.size(), nullptr, params.values(), params.lengths(),
                           params.formats(), result_format),
              statement_name(sql));
}

Result<void> Connection::set_session(std::string sql) {
  if (auto set = exec(sql); !set) return set;
  session_.push_back(std::move(sql));
  return {};
}

Result<void> Connection::prepare(const std::string& name, std::string_view sql) {
  // Objects opened again on the same connection (a second processing store) find their
  // statements there.
  for (const auto& [known, known_sql] : prepared_) {
    if (known == name) {
      if (known_sql == sql) return {};
      return fail(ErrorKind::other, "PostgreSQL: statement " + name + " is already prepared with other SQL");
    }
  }
  const std::string text(sql);
  auto done = bounded() ? bounded_results(PQsendPrepare(get(), name.c_str(), text.c_str(), 0, nullptr),
                                          statement_name(sql))
                        : take(PQprepare(get(), name.c_str(), text.c_str(), 0, nullptr), statement_name(sql));
  if (!done) return fail(done);
  prepared_.emplace_back(name, text);
  return {};
}

Result<void> Connection::reconnect_if_broken() {
  if (!handle_) return closed("PostgreSQL");  // closed for good (give_up): open a new one
  if (PQstatus(get()) == CONNECTION_OK && !restore_pending_) return {};
  PQreset(get());  // the same parameters as the first connection
  if (PQstatus(get()) != CONNECTION_OK) {
    return fail(ErrorKind::unavailable, "PostgreSQL: cannot connect again: " + trimmed(PQerrorMessage(get())));
  }
  ++generation_;
  // Until the settings and statements are all back, the connection is not one to use: a
  // failure here leaves it to be opened again next time, not half restored and taken for
  // healthy (its statements missing, a setting such as a lock timeout lost).
  restore_pending_ = true;
  for (const std::string& sql : session_) {
    if (auto set = exec(sql); !set) return set;
  }
  for (const auto& [name, sql] : prepared_) {
    if (auto again = take(PQprepare(get(), name.c_str(), sql.c_str(), 0, nullptr), name); !again) {
      return fail(again);
    }
  }
  restore_pending_ = false;
  return {};
}

Result<Rows> Connection::run(const std::string& name, const Params& params, Results format) {
  const int result_format = format == Results::binary ? 1 : 0;
  if (bounded()) {
    return bounded_results(PQsendQueryPrepared(get(), name.c_str(), params.size(), params.values(), params.lengths(),
                                               params.formats(), result_format),
                           name);
  }
  return take(PQexecPrepared(get(), name.c_str(), params.size(), params.values(), params.lengths(),
                             params.formats(), result_format),
              name);
}

Result<std::optional<int64_t>> Connection::query_int(std::string_view sql, const Params& params) {
  auto rows = query(sql, params);
  if (!rows) return fail(rows);
  if (rows->empty() || rows->is_null(0, 0)) return std::optional<int64_t>();
  return std::optional<int64_t>(rows->integer(0, 0));
}

Result<Pipeline> Pipeline::begin(Connection& db) {
  if (!db.handle_) return closed("PostgreSQL: pipeline mode");
  if (PQenterPipelineMode(db.get()) != 1) {
    return fail(ErrorKind::unavailable, "PostgreSQL: pipeline mode: " + trimmed(PQerrorMessage(db.get())));
  }
  return Pipeline(&db);
}

Pipeline::~Pipeline() {
  // Not finished (an error on the way): read what is outstanding, so that the connection
  // leaves pipeline mode and can be used again.
  if (db_ != nullptr) (void)finish();
}

Result<void> Pipeline::send(std::string_view sql, const Params& params) {
  const std::string text(sql);
  if (PQsendQueryParams(db_->get(), text.c_str(), params.size(), nullptr, params.values(), params.lengths(),
                        params.formats(), 0) != 1) {
    return fail(ErrorKind::unavailable, "PostgreSQL: sending " + statement_name(sql) + ": " +
                                            trimmed(PQerrorMessage(db_->get())));
  }
  ++sent_;
  return {};
}

Result<void> Pipeline::send_prepared(const std::string& name, const Params& params, Results format) {
  if (PQsendQueryPrepared(db_->get(), name.c_str(), params.size(), params.values(), params.lengths(),
                          params.formats(), format == Results::binary ? 1 : 0) != 1) {
    return fail(ErrorKind::unavailable, "PostgreSQL: sending " + name + ": " + trimmed(PQerrorMessage(db_->get())));
  }
  ++sent_;
  return {};
}

Result<std::vector<Rows>> Pipeline::finish() {
  if (db_ == nullptr) return fail(ErrorKind::other, "PostgreSQL: pipeline finished twice");
  // Whatever happens below, the connection leaves pipeline mode (synchronous statements,
  // a ROLLBACK included, are refused in it) and this pipeline is done.
  struct Leave {
    Connection*& db;
    ~Leave() {
      // Refused while results are left unread (libpq could not read them: out of memory):
      // the connection would stay in pipeline mode, where every later statement, a
      // ROLLBACK included, is refused. Opened again at the next reconnect_if_broken().
      if (PQexitPipelineMode(db->get()) != 1) db->restore_pending_ = true;
      db = nullptr;
    }
  } leave{db_};
  PGconn* conn = db_->get();
  db_->last_sqlstate_.clear();
  // With a reply timeout, each result is waited for within it (until then, PQgetResult would
  // wait as long as the server takes). One that does not come closes the connection: `conn`
  // is gone then, and nothing more is read.
  const bool bounded = db_->bounded();
  const auto deadline = Connection::Clock::now() + db_->reply_timeout_;
  db_->gave_up_waiting_ = false;
  const auto await = [&]() -> Result<void> {
    return bounded ? db_->await_result(deadline, "PostgreSQL: pipeline") : Result<void>();
  };
  std::vector<Rows> results;
  results.reserve(static_cast<size_t>(sent_));
  std::optional<Error> first_error;
  const int expected = sent_;
  sent_ = 0;
  if (PQpipelineSync(conn) != 1) {
    return fail(ErrorKind::unavailable, "PostgreSQL: pipeline sync: " + trimmed(PQerrorMessage(conn)));
  }
  // Each statement's results end with a NULL; the sync's own result ends the pipeline.
  for (int i = 0; i < expected; ++i) {
    Rows rows;
    for (;;) {
      if (auto ready = await(); !ready) return fail(ready);
      PGresult* r = PQgetResult(conn);
      if (r == nullptr) break;
      Rows part(r);
      const ExecStatusType status = PQresultStatus(r);
      if (status == PGRES_PIPELINE_ABORTED) {
        if (!first_error) first_error = fail(ErrorKind::other, "PostgreSQL: statement skipped after an error");
      } else if (!succeeded(r)) {
        if (!first_error || first_error->message.starts_with("PostgreSQL: statement skipped")) {
          first_error = db_->failure(r, "PostgreSQL");
        }
      }
      rows = std::move(part);
    }
    if (PQstatus(conn) != CONNECTION_OK) {
      return fail(ErrorKind::unavailable, "PostgreSQL: connection lost: " + lost_connection_message(trimmed(PQerrorMessage(conn))));
    }
    results.push_back(std::move(rows));
  }
  for (;;) {
    if (auto ready = await(); !ready) return fail(ready);
    PGresult* r = PQgetResult(conn);
    if (r == nullptr) break;
    Rows sync(r);
    if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) break;
  }
  if (first_error) return *first_error;
  return results;
}

Result<void> TransactionEngine::commit(Connection& db) {
  auto committed = db.query("COMMIT");
  if (!committed) return fail(committed);
  // COMMIT of a transaction that an error aborted answers ROLLBACK, without an error.
  if (std::string_view(PQcmdStatus(committed->get())) != "COMMIT") {
    return fail(ErrorKind::other, "COMMIT: the transaction was rolled back after an earlier error");
  }
  return {};
}

}  // namespace hh::pg
