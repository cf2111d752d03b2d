#include "store/sqlite/connection.h"

#include <simdjson.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include "store/damaged_file.h"
#include "store/sqlite/file_access.h"
#include "store/sqlite/frame_vfs.h"

namespace hh::sqlite {

// SQLite's own words for a damaged file ("database disk image is malformed") say nothing of
// what to do: said once here, for every statement.
std::string with_advice(std::string error, int extended_code, sqlite3* db) {
  if ((extended_code & 0xff) == SQLITE_CORRUPT) {
    error += ": " + store::damaged_file();
  }
  // "attempt to write a readonly database" names neither the file nor the cause. Opening
  // refuses a read-only main file (store/sqlite/database.cpp); this is what is left: a
  // read-only -wal or -shm (left behind by a reader running as another user, or after a
  // chmod), a read-only mount reached later, or a command opened for reading that writes.
  if ((extended_code & 0xff) == SQLITE_READONLY) {
    const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
    if (file && *file) error = std::string(file) + ": " + error;
    error += ": healthhook must be able to write the database file and the -wal and -shm files beside it";
  }
  return error;
}

ErrorKind error_kind(int extended_code) {
  switch (extended_code & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE: return ErrorKind::data;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return ErrorKind::busy;
    case SQLITE_FULL: return ErrorKind::full;
    case SQLITE_IOERR: return ErrorKind::io;
    case SQLITE_CANTOPEN: return ErrorKind::unavailable;
    default: return ErrorKind::other;
  }
}

std::optional<std::string_view> not_a_regular_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode)) return std::nullopt;
  if (S_ISDIR(info.st_mode)) return kFolder;
  if (S_ISFIFO(info.st_mode)) return "a FIFO";
  if (S_ISCHR(info.st_mode)) return "a character device";
  if (S_ISBLK(info.st_mode)) return "a block device";
  if (S_ISSOCK(info.st_mode)) return "a socket";
  return "a special file";
}

namespace {

std::string first_line(std::string_view sql) {
  const auto start = sql.find_first_not_of(" \n\t");
  if (start == std::string_view::npos) return {};
  sql.remove_prefix(start);
  return std::string(sql.substr(0, std::min(sql.find('\n'), size_t{80})));
}

// hh_json_text(X): 1 when X (a blob or a text) could be JSON text as far as its bytes go:
// UTF-8 without a NUL byte (JSON has none raw, in a string or out), else 0. SQLite's
// json_valid() takes any byte above 0x7f inside a string and stops reading at a NUL: the
// outbox's "is the body JSON" test needs this beside it (a body stored invalid for either
// is not forwarded).
void json_text(sqlite3_context* context, int, sqlite3_value** args) {
  const auto* bytes = static_cast<const char*>(sqlite3_value_blob(args[0]));
  const auto size = static_cast<size_t>(sqlite3_value_bytes(args[0]));
  const bool text = size == 0 || (bytes && std::memchr(bytes, 0, size) == nullptr && simdjson::validate_utf8(bytes, size));
  sqlite3_result_int(context, text ? 1 : 0);
}

}  // namespace

Result<Connection> Connection::open(const std::string& path, OpenMode mode) {
  int flags = SQLITE_OPEN_NOMUTEX;  // one thread per connection: no SQLite mutex needed
  switch (mode) {
    case OpenMode::read_write_create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
    case OpenMode::read_write: flags |= SQLITE_OPEN_READWRITE; break;
    case OpenMode::read_only: flags |= SQLITE_OPEN_READONLY; break;
  }
  // SQLite says "disk I/O error" or "unable to open database file" for a folder or a
  // device, and waits for ever on a FIFO: refused before it opens anything.
  if (const auto kind = not_a_regular_file(path)) {
    const bool folder = *kind == kFolder;
    return fail(ErrorKind::data, "cannot open database " + path + ": it is " + std::string(*kind) +
                                     (folder ? "; give the database file's path" : ", not a database file"));
  }
  sqlite3* raw = nullptr;
  // WAL frames in one write each (frame_vfs.h); SQLite's default VFS should that fail.
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, frame_vfs_name());
  Connection connection(raw);  // owns the handle even when open failed
  if (rc != SQLITE_OK) {
    // "unable to open database file" whatever the cause: a file another user owns (a
    // database `serve` created as root, opened later as the service's user) is named, with
    // its owner and mode, for every command alike.
    if ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_PERM) {
      if (auto refusal = access_refusal(path, kDatabaseFile, Access::read, mode == OpenMode::read_write_create)) {
        return fail(*refusal);
      }
    }
    return fail("cannot open database " + path + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_create_function_v2(raw, "hh_json_text", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                             json_text, nullptr, nullptr, nullptr);
  // What a writing connection deletes is overwritten as it is freed, whatever the build's
  // default (decision 085): a freed page that is reused keeps no bytes of what it held, so
  // no erasure leaves a user's data readable in the file. Every connection that writes
  // opens here (the processor's, the sender's, the commands').
  if (mode != OpenMode::read_only) {
    if (auto secure = connection.exec("PRAGMA secure_delete = ON"); !secure) {
      return fail(secure, "cannot open database " + path);
    }
  }
  return connection;
}

Result<void> Connection::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(handle_.get(), text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string error = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    return fail(error_kind(rc), with_advice(error, rc, handle_.get()) + " (in: " + first_line(sql) + ")");
  }
  return {};
}

Result<Statement> Connection::prepare(std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(handle_.get(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return fail(last_error() + " (in: " + first_line(sql) + ")");
  }
  return Statement(raw);
}

struct Connection::BusyWait {
  using Clock = std::chrono::steady_clock;
  std::chrono::milliseconds timeout{0};
  Clock::time_point first_try;
  Clock::time_point last_try;

  // SQLite's busy handler: `tries` is how often it was called since the statement (or
  // prepare) began. A wait that starts with tries > 0 (a statement that waited before) is
  // new when the last try was longer ago than any sleep here.
  static int wait(void* self, int tries) {
    constexpr std::chrono::microseconds kFirstWait{10};
    constexpr int kDoublings = 7;  // 10 µs doubled up to 1.28 ms
    constexpr std::chrono::milliseconds kLongestWait{20};
    constexpr std::chrono::milliseconds kNewWaitAfter{100};
    auto& w = *static_cast<BusyWait*>(self);
    const auto now = Clock::now();
    if (tries == 0 || now - w.last_try > kNewWaitAfter) w.first_try = now;
    w.last_try = now;
    const auto waited = now - w.first_try;
    const auto left = w.timeout - waited;
    if (left <= Clock::duration::zero()) return 0;  // fail busy
    // Short tries while a short transaction holds the lock; then a tenth of the wait so far,
    // so a lock held for seconds (a rebuild, a shell) costs tens of tries a second, not a
    // thousand.
    const Clock::duration first = kFirstWait * (1 << std::min(tries, kDoublings));
    std::this_thread::sleep_for(
        std::min<Clock::duration>({std::max<Clock::duration>(first, waited / 10), kLongestWait, left}));
    return 1;  // try again
  }
};

void Connection::BusyWaitDeleter::operator()(BusyWait* wait) const { delete wait; }

void Connection::wait_when_busy(std::chrono::milliseconds timeout) {
  if (!busy_wait_) busy_wait_.reset(new BusyWait);
  busy_wait_->timeout = timeout;
  sqlite3_busy_handler(handle_.get(), &BusyWait::wait, busy_wait_.get());
}

std::chrono::milliseconds Connection::busy_timeout() const {
  return busy_wait_ ? busy_wait_->timeout : std::chrono::milliseconds(0);
}

Result<void> Connection::open_wal() {
  auto read = query_int("SELECT count(*) FROM sqlite_schema");
  if (!read) return fail(read);
  return {};
}

Result<std::optional<int64_t>> Connection::query_int(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return fail(stmt);
  auto row = stmt->step();
  if (!row) return fail(row);
  if (!*row || stmt->column_is_null(0)) return std::optional<int64_t>{};
  return std::optional<int64_t>{stmt->column_int(0)};
}

Statement& Statement::bind(int index, int64_t value) {
  note_bind(sqlite3_bind_int64(handle_.get(), index, value));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  note_bind(sqlite3_bind_double(handle_.get(), index, value));
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  note_bind(sqlite3_bind_text64(handle_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind_static(int index, std::string_view text) {
  note_bind(sqlite3_bind_text64(handle_.get(), index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind_blob(int index, std::span<const char> bytes) {
  note_bind(sqlite3_bind_blob64(handle_.get(), index, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::bind_blob_static(int index, std::span<const char> bytes) {
  note_bind(sqlite3_bind_blob64(handle_.get(), index, bytes.data(), bytes.size(), SQLITE_STATIC));
  return *this;
}

Statement& Statement::bind_null(int index) {
  note_bind(sqlite3_bind_null(handle_.get(), index));
  return *this;
}

Result<bool> Statement::step() {
  if (bind_error_ != SQLITE_OK) {
    const int rc = bind_error_;
    reset();
    return fail(error_kind(rc), std::string("bind failed: ") + sqlite3_errstr(rc));
  }
  const int rc = sqlite3_step(handle_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(handle_.get());
  std::string error = with_advice(sqlite3_errmsg(db), rc, db);
  reset();
  return fail(error_kind(rc), error);
}

Result<void> Statement::run() {
  for (;;) {
    auto row = step();
    if (!row) return fail(row);
    if (!*row) break;
  }
  reset();
  return {};
}

void Statement::reset() {
  sqlite3_reset(handle_.get());
  sqlite3_clear_bindings(handle_.get());
  bind_error_ = SQLITE_OK;
}

std::string_view Statement::column_text(int index) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(handle_.get(), index));
  const int size = sqlite3_column_bytes(handle_.get(), index);
  return text ? std::string_view(text, static_cast<size_t>(size)) : std::string_view();
}

std::string_view Statement::column_blob(int index) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(handle_.get(), index));
  const int size = sqlite3_column_bytes(handle_.get(), index);
  return data ? std::string_view(data, static_cast<size_t>(size)) : std::string_view();
}

}  // namespace hh::sqlite
