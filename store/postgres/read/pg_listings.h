#pragma once
// The PostgreSQL listings of the read queries written once (store/queries/listings.h): an
// export through a server-side cursor, a page or lookup as a whole result, on the
// session's connection (read_session.h). Text keys sort bytewise (COLLATE "C"), as
// SQLite's BINARY collation does.
//
// Lifetime: the session must outlive this; one thread at a time.
#include <array>
#include <cstddef>
#include <string>

#include "store/postgres/read/read_session.h"
#include "store/queries/listings.h"
#include "store/queries/query_args.h"

namespace hh::store::pgread {

// `args` as a statement's parameters (viewing their text).
pg::Params params_of(const QueryArgs& args);

// Reads from a cursor (exports) or a whole result (pages, lookups), whichever was started.
class TwoWayListing {
 public:
  TwoWayListing(ReadSession& session, int fetch) : cursor_(session, fetch), listing_(session) {}
  Result<void> open_cursor(std::string_view sql, const pg::Params& params);
  Result<void> open_listing(std::string_view sql, const pg::Params& params);
  Result<bool> next(ResultRow& row);
  void close();

 private:
  Cursor cursor_;
  Listing listing_;
  bool from_cursor_ = false;
};

template <size_t N>
class PgListings {
 public:
  // `sql`: the statements' text, in static storage.
  PgListings(ReadSession& session, const std::array<std::string, N>& sql, RowSize rows = RowSize::small)
      : sql_(&sql), rows_(session, rows == RowSize::with_bodies ? kFetchDeliveries : kFetchRows), lookup_(session) {}

  Result<void> start(size_t which, const QueryArgs& args, Fetch fetch) {
    const pg::Params params = params_of(args);
    if (fetch == Fetch::cursor) return rows_.open_cursor((*sql_)[which], params);
    return rows_.open_listing((*sql_)[which], params);
  }

  template <typename Read>
  Result<bool> next(Read&& read) {
    ResultRow row;
    auto has_row = rows_.next(row);
    if (has_row && *has_row) read(static_cast<const ResultRow&>(row));
    return has_row;
  }

  void finish() { rows_.close(); }

  template <typename Read>
  Result<bool> lookup(size_t which, const QueryArgs& args, Read&& read) {
    auto found = find(which, args, std::forward<Read>(read));
    lookup_.close();
    return found;
  }

  template <typename Read>
  Result<bool> find(size_t which, const QueryArgs& args, Read&& read) {
    if (auto opened = lookup_.open((*sql_)[which], params_of(args)); !opened) return fail(opened);
    ResultRow row;
    if (!lookup_.next(row)) return false;
    read(static_cast<const ResultRow&>(row));
    return true;
  }

 private:
  const std::array<std::string, N>* sql_;
  TwoWayListing rows_;
  Listing lookup_;
};

}  // namespace hh::store::pgread
