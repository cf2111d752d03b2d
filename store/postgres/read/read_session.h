#pragma once
// The PostgreSQL reader's connection and how its queries read (store/read_store.h on
// PostgreSQL, store/figures.h, store/follow_up_reads.h):
//
//  - connect_reader(): a connection to a store that must already hold a healthhook schema
//    no newer than this binary's. A reader never creates or migrates anything.
//  - ReaderLink: that connection, opened again when the server went away (a restart, a
//    failover): readers live long (the read API's pool, /metrics, the fetcher), and a
//    statement outside a transaction is simply run again on the new connection (a read
//    changes nothing). Inside a transaction the error stands: its snapshot is gone. With
//    a reply timeout (Database::reply_timeout), a statement not answered in time closes
//    the connection and fails; the next statement opens a new one.
//  - ReadSession: the connection and its one read transaction (REPEATABLE READ READ ONLY),
//    open while a ReadSnapshot lives or a listing needs it (Cursor below).
//  - Cursor: a listing of any length in flat memory. We read exports through server-side
//    cursors (DECLARE … CURSOR, FETCH n), not keyset pages: one cursor reads the very SQL of
//    the listing, whatever its order and filters, in one consistent view of the store (as
//    one SQLite statement does), where keyset pages would need a unique resume key and a
//    query variant per listing, and would see writes between pages unless a transaction
//    held them anyway. The cost is a transaction held while a listing is open; finish()
//    on a listing stopped early ends it (as SQLite's reset ends its read snapshot).
//  - ResultRow: the current row of a result, read like a SQLite statement's row
//    (store/read_query_common.h's row readers take either).
//
// Rows come in text format (store/postgres/connection.h); bytea columns as hex (\x…),
// decoded by ResultRow::column_blob into a buffer of the listing.
//
// Text keys sort and compare bytewise, as in SQLite (BINARY). The SQL says so with
// COLLATE "C", which keeps the order right in a database of any collation; but then an
// index of the database's default collation cannot give that order (a sort instead), even
// where that default is C itself. So on a database whose default collation is bytewise
// (C or POSIX, libc), the session drops COLLATE "C" from the SQL it runs (for_collation).
//
// One thread at a time, like the connection.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database_location.h"
#include "store/postgres/connection.h"

namespace hh::store::pgread {

// Rows per FETCH of a cursor: a round trip per this many rows, and at most this many in
// memory (deliveries carry bodies: their listings fetch fewer, kFetchDeliveries).
inline constexpr int kFetchRows = 1000;
inline constexpr int kFetchDeliveries = 16;

// A connection to the store `database` names, which must hold a healthhook schema (an
// error says so otherwise) no newer than this binary's, and whether the database's
// default collation is bytewise.
struct ReaderConnection {
  pg::Connection db;
  bool bytewise_collation = false;
};
Result<ReaderConnection> connect_reader(const Database& database);

class ReaderLink {
 public:
  static Result<ReaderLink> open(const Database& database);

  // One statement (for_collation). `in_transaction`: the caller has a transaction open on
  // this connection (then a broken connection is not reopened: the error stands).
  Result<pg::Rows> query(std::string_view sql, const pg::Params& params = {}, bool in_transaction = false);
  // One statement run with each of `params`, in one round trip (a pipeline), inside the
  // caller's transaction.
  Result<std::vector<pg::Rows>> query_each(std::string_view sql, const std::vector<pg::Params>& params);
  bool bytewise_collation() const { return bytewise_collation_; }

 private:
  ReaderLink(Database database, ReaderConnection connection)
      : database_(std::move(database)), db_(std::move(connection.db)),
        bytewise_collation_(connection.bytewise_collation) {}
  Database database_;
  pg::Connection db_;
  bool bytewise_collation_ = false;
};

// `sql` as run on a database whose default collation is (or is not) bytewise: without its
// COLLATE "C" clauses when it is.
std::string for_collation(std::string_view sql, bool bytewise_collation);

// Decodes bytea's text output (\x followed by hex digits) into `out`.
void decode_bytea(std::string_view text, std::string& out);

class ReadSession {
 public:
  explicit ReadSession(ReaderLink link) : link_(std::move(link)) {}
  ReadSession(const ReadSession&) = delete;
  ReadSession& operator=(const ReadSession&) = delete;

  // A read snapshot (ReadStore::begin_snapshot): the transaction stays open until
  // end_snapshot() and every listing still open has ended.
  Result<void> begin_snapshot();
  void end_snapshot();

  // A listing's hold on the transaction (opened by the first hold), released when done.
  Result<void> hold();
  void release();

  // One statement (for_collation), inside the transaction when one is open. An error there aborts it
  // (PostgreSQL accepts nothing more in it): it is rolled back and every hold dropped; a
  // snapshot then fails its queries until it ends.
  Result<pg::Rows> query(std::string_view sql, const pg::Params& params = {});
  // ReaderLink::query_each, inside a transaction held by the caller; an error aborts it.
  Result<std::vector<pg::Rows>> query_each(std::string_view sql, const std::vector<pg::Params>& params);

  // Bumped whenever the transaction ends after an error: cursors of an older generation
  // are gone with it.
  uint64_t generation() const { return generation_; }
  // A cursor name unique on this connection.
  std::string next_cursor_name() { return "hh_read_" + std::to_string(++cursors_); }

 private:
  Result<void> open_transaction();
  void close_if_unused();
  void abort();

  ReaderLink link_;
  bool in_transaction_ = false;
  bool snapshot_ = false;
  bool snapshot_broken_ = false;  // the snapshot's transaction ended after an error
  int holds_ = 0;
  uint64_t generation_ = 0;
  uint64_t cursors_ = 0;
};

// The current row of a result, with the column readers of store/read_query_common.h.
// column_blob decodes bytea into `blob` (one blob column per row).
struct ResultRow {
  const pg::Rows* rows = nullptr;
  int row = 0;
  std::string* blob = nullptr;

  bool column_is_null(int c) const { return rows->is_null(row, c); }
  std::string_view column_text(int c) const { return rows->text(row, c); }
  std::optional<std::string_view> column_optional_text(int c) const { return rows->optional_text(row, c); }
  int64_t column_int(int c) const { return rows->is_null(row, c) ? 0 : rows->integer(row, c); }
  std::optional<int64_t> column_optional_int(int c) const { return rows->optional_integer(row, c); }
  std::optional<double> column_optional_double(int c) const {
    if (column_is_null(c)) return std::nullopt;
    return rows->real(row, c);
  }
  // A 0/1 flag (bigint), as SQLite keeps it.
  std::optional<bool> column_optional_bool(int c) const {
    if (column_is_null(c)) return std::nullopt;
    return rows->integer(row, c) != 0;
  }
  std::string_view column_blob(int c) const {
    decode_bytea(column_text(c), *blob);
    return *blob;
  }
};

// A listing read through a server-side cursor, `fetch` rows at a time, inside the
// session's transaction (held from open() until the last row or close()).
class Cursor {
 public:
  explicit Cursor(ReadSession& session, int fetch = kFetchRows) : session_(&session), fetch_(fetch) {}
  ~Cursor() { close(); }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  // Ends any listing and declares one over `sql` with `params`.
  Result<void> open(std::string_view sql, const pg::Params& params);
  // The next row (false when there is none left: the cursor is then closed). The row
  // stays valid until the next call.
  Result<bool> next(ResultRow& row);
  // Ends the listing (closes the cursor, releases the transaction).
  void close();

 private:
  ReadSession* session_;
  int fetch_;
  std::string name_;
  bool open_ = false;
  bool exhausted_ = false;  // the last FETCH gave fewer than fetch_ rows
  uint64_t generation_ = 0;
  pg::Rows batch_;
  int index_ = -1;
  std::string blob_;
};

// A bounded listing (a page with LIMIT, a lookup): its whole result at once, rows handed
// out one by one and valid until the next query.
class Listing {
 public:
  explicit Listing(ReadSession& session) : session_(&session) {}
  Result<void> open(std::string_view sql, const pg::Params& params);
  bool next(ResultRow& row);
  void close() { rows_ = pg::Rows(); index_ = -1; }

 private:
  ReadSession* session_;
  pg::Rows rows_;
  int index_ = -1;
  std::string blob_;
};

}  // namespace hh::store::pgread
