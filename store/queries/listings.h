#pragma once
// What the read queries written once (store/queries/*.h, instantiated per backend in
// store/sqlite/sqlite_read_store.cpp and store/postgres/read/pg_read_store.cpp) ask of a
// backend. A backend's read policy `Reads` provides:
//
//   Reads::dialect               its schema::Dialect; the queries spell their SQL with it once
//   Reads::Session               its read connection: begin_snapshot() -> Result<void>,
//                                end_snapshot(); constructed from what open_…_read_store() opened
//   Reads::Listings<N>           the statements of one query on a Session&, constructed with
//                                (session, N SQL texts spelled for it in static storage,
//                                RowSize):
//     start(which, args, fetch)  ends any listing and starts statement `which` with `args`
//     next(read) -> Result<bool> calls read(row) with the next row of the listing; false at
//                                its end (the listing is then finished)
//     finish()                   ends the listing (and, on SQLite, the read snapshot it held)
//     lookup(which, args, read)  -> Result<bool>: reads one row of another statement, beside
//                                the listing; the row is gone after read() (copy what is kept)
//     find(which, args, read)    -> Result<bool>: the same, but the row stays current until
//                                the next find() or finish() (views into it stay valid)
//   Reads::SampleQuery           its store::SampleQuery (the two engines merge series in time
//                                order differently: sample_query.h of each)
//   Reads::kDeliveryWindow       the condition of an inbox window on received_at (?3, ?4) and
//                                the event-type pattern (?5), and Reads::event_type_pattern(glob)
//                                the pattern for ?5 (SQLite GLOB; PostgreSQL a regex)
//   Reads::kSearchedUserIds      the user ids of a delivery search by user, ?8 (a JSON array
//                                of strings), as a subquery of one column for IN
//
// Rows passed to read() have the column readers of store/read_query_common.h.
namespace hh::store {

// How a listing fetches: `cursor` for an export of any length (PostgreSQL: a server-side
// cursor, memory flat), `whole` for a bounded page or lookup (its result at once). SQLite
// steps a statement either way.
enum class Fetch { cursor, whole };

// How large a listing's rows are: inbox rows carry bodies, and a summary's JSON (or a
// record's data: a device, a connection, a lab order) can be as large as a body, so
// PostgreSQL fetches fewer of them per round trip (memory stays bounded).
enum class RowSize { small, with_bodies };

}  // namespace hh::store
