#include "store/postgres/read/read_session.h"

#include "store/postgres/copy_progress.h"
#include "store/postgres/database.h"

namespace hh::store::pgread {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

}  // namespace

Result<ReaderConnection> connect_reader(const Database& database) {
  auto db = connect(database);
  if (!db) return fail(db);
  // Whatever runs on a reader's connection cannot write, even outside a transaction.
  if (auto set = db->exec("SET default_transaction_read_only = on"); !set) return fail(set);
  // The schema's own record of itself (store/postgres/database.cpp); looked up without
  // touching a missing table, so that nothing is logged as an error on the server.
  auto found = db->query(
      "SELECT to_regclass('schema_migrations') IS NOT NULL, "
      "(SELECT coalesce(to_jsonb(d) ->> 'datlocprovider', 'c') = 'c' AND d.datcollate IN ('C', 'POSIX') "
      " FROM pg_database AS d WHERE d.datname = current_database())");
  if (!found) return fail(found);
  // (datlocprovider, libc or ICU, is PostgreSQL 15's; read through jsonb so that older
  // servers, all libc, answer too.)
  const bool bytewise = found->boolean(0, 1);
  std::optional<int64_t> version;
  if (found->boolean(0, 0)) {
    auto max = db->query_int("SELECT max(version) FROM schema_migrations");
    if (!max) return fail(max);
    version = *max;
  }
  if (version.value_or(0) == 0) {
    return fail("PostgreSQL: not a healthhook database (no schema): a reader creates none; "
                "open it for writing first (healthhook serve)");
  }
  if (*version > postgres_schema_version()) {
    return fail("PostgreSQL: database schema version " + std::to_string(*version) +
                " is newer than this healthhook");
  }
  // A half copy answers incomplete data as if whole: refused, as `query` refuses an
  // unfinished rebuild.
  if (auto whole = refuse_unfinished_copy(*db, database); !whole) return fail(whole);
  return ReaderConnection{std::move(*db), bytewise};
}

std::string for_collation(std::string_view sql, bool bytewise_collation) {
  std::string out(sql);
  if (!bytewise_collation) return out;
  constexpr std::string_view kClause = " COLLATE \"C\"";
  for (size_t at = out.find(kClause); at != std::string::npos; at = out.find(kClause, at)) {
    out.erase(at, kClause.size());
  }
  return out;
}

void decode_bytea(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x') {
    out.assign(text);  // not hex output (bytea_output = escape is never set by us)
    return;
  }
  out.resize((text.size() - 2) / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<char>(hex_value(text[2 + 2 * i]) * 16 + hex_value(text[3 + 2 * i]));
  }
}

// ---- ReaderLink

Result<ReaderLink> ReaderLink::open(const Database& database) {
  auto connection = connect_reader(database);
  if (!connection) return fail(connection);
  return ReaderLink(database, std::move(*connection));
}

Result<pg::Rows> ReaderLink::query(std::string_view sql, const pg::Params& params, bool in_transaction) {
  const std::string text = for_collation(sql, bytewise_collation_);
  auto rows = db_.query(text, params);
  // libpq learns that the server went away only when it next sends something. A server
  // that did not answer in time is not waited for again at once (the caller's bound is
  // spent): the next call opens a new connection.
  if (rows || in_transaction || db_.is_open() || db_.gave_up_waiting()) return rows;
  auto again = connect_reader(database_);
  if (!again) return fail(rows.error_kind(), rows.error() + " (reconnecting: " + again.error() + ")");
  db_ = std::move(again->db);
  return db_.query(text, params);
}

Result<std::vector<pg::Rows>> ReaderLink::query_each(std::string_view sql, const std::vector<pg::Params>& params) {
  const std::string text = for_collation(sql, bytewise_collation_);
  auto pipeline = pg::Pipeline::begin(db_);
  if (!pipeline) return fail(pipeline);
  for (const pg::Params& each : params) {
    if (auto sent = pipeline->send(text, each); !sent) return fail(sent);
  }
  return pipeline->finish();
}

// ---- ReadSession

Result<void> ReadSession::open_transaction() {
  if (in_transaction_) return {};
  auto begun = link_.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  if (!begun) return fail(begun);
  in_transaction_ = true;
  return {};
}

void ReadSession::close_if_unused() {
  if (!in_transaction_ || holds_ > 0 || snapshot_) return;
  in_transaction_ = false;
  // Nothing was written: ending it cannot lose anything, and a failure (the connection
  // broke) shows on the next query.
  (void)link_.query("COMMIT", {}, true);
}

void ReadSession::abort() {
  if (!in_transaction_) return;
  (void)link_.query("ROLLBACK", {}, true);
  in_transaction_ = false;
  holds_ = 0;
  if (snapshot_) snapshot_broken_ = true;
  ++generation_;
}

Result<void> ReadSession::begin_snapshot() {
  if (snapshot_) return fail("a read snapshot is already open");
  if (auto begun = open_transaction(); !begun) return begun;
  snapshot_ = true;
  snapshot_broken_ = false;
  return {};
}

void ReadSession::end_snapshot() {
  snapshot_ = false;
  snapshot_broken_ = false;
  close_if_unused();
}

Result<void> ReadSession::hold() {
  if (snapshot_broken_) return fail("the read snapshot ended after an error");
  if (auto begun = open_transaction(); !begun) return begun;
  ++holds_;
  return {};
}

void ReadSession::release() {
  if (holds_ > 0) --holds_;
  close_if_unused();
}

Result<pg::Rows> ReadSession::query(std::string_view sql, const pg::Params& params) {
  if (snapshot_broken_) return fail("the read snapshot ended after an error");
  auto rows = link_.query(sql, params, in_transaction_);
  if (!rows) abort();
  return rows;
}

Result<std::vector<pg::Rows>> ReadSession::query_each(std::string_view sql, const std::vector<pg::Params>& params) {
  if (snapshot_broken_) return fail("the read snapshot ended after an error");
  auto rows = link_.query_each(sql, params);
  if (!rows) abort();
  return rows;
}

// ---- Cursor

Result<void> Cursor::open(std::string_view sql, const pg::Params& params) {
  close();
  if (auto held = session_->hold(); !held) return held;
  name_ = session_->next_cursor_name();
  generation_ = session_->generation();
  // Parameters reach the cursor's query as they would a plain statement's.
  auto declared = session_->query("DECLARE " + name_ + " NO SCROLL CURSOR FOR " + std::string(sql), params);
  if (!declared) return fail(declared);
  open_ = true;
  exhausted_ = false;
  batch_ = pg::Rows();
  index_ = -1;
  return {};
}

Result<bool> Cursor::next(ResultRow& row) {
  if (!open_) return false;
  if (generation_ != session_->generation()) {
    open_ = false;  // the transaction ended after an error, the cursor with it
    return fail("the listing ended after an error");
  }
  if (++index_ >= batch_.size()) {
    if (exhausted_) {
      close();
      return false;
    }
    auto fetched = session_->query("FETCH FORWARD " + std::to_string(fetch_) + " FROM " + name_);
    if (!fetched) {
      open_ = false;
      return fail(fetched);
    }
    batch_ = std::move(*fetched);
    index_ = 0;
    exhausted_ = batch_.size() < fetch_;
    if (batch_.empty()) {
      close();
      return false;
    }
  }
  row = ResultRow{&batch_, index_, &blob_};
  return true;
}

void Cursor::close() {
  if (!open_) return;
  open_ = false;
  if (generation_ != session_->generation()) return;  // gone with its transaction
  // The batch stays: the last row handed out views it until the next call.
  if (auto closed = session_->query("CLOSE " + name_); !closed) return;  // the session rolled back
  session_->release();
}

// ---- Listing

Result<void> Listing::open(std::string_view sql, const pg::Params& params) {
  close();
  auto rows = session_->query(sql, params);
  if (!rows) return fail(rows);
  rows_ = std::move(*rows);
  return {};
}

bool Listing::next(ResultRow& row) {
  if (++index_ >= rows_.size()) {
    index_ = rows_.size();
    return false;
  }
  row = ResultRow{&rows_, index_, &blob_};
  return true;
}

}  // namespace hh::store::pgread
