#pragma once
// `healthhook purge-user`: erasing everything the store holds about one user (spec §11),
// on a connection of its own. One implementation per backend; store/open_store.h opens it.
//
// What belongs to the user: every inbox row that names them with its outcome and its
// removed-body record, and every derived row about them: samples and their series,
// summaries, workout streams and their points, connections, devices, lab orders,
// appointments, results and parsing jobs, backfills, the follow-up jobs for those, their
// change-feed rows, forwards not sent yet and their `users` row. Every one of those tables
// names the user in a column, and the erasure finds the rows by it (store/erasure_plan.h),
// so a body that retention removed is not needed. Provider lists and the processor's
// cursor name nobody and stay.
//
// erase() removes it in one transaction (a failure half-way has removed nothing), records
// the erasure in it (who, when, rows per table; no health data) and gives the space back
// where the backend can. Deliveries for the user stored afterwards are kept and applied as usual:
// the service decides what it sends.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hh::store {

// Rows of one table that belong to the user.
struct TableRows {
  std::string table;
  int64_t rows = 0;
};

struct ErasureReport {
  std::vector<TableRows> tables;  // every table erase() covers, in the order it empties them, zeros included
  int64_t total_rows() const {
    int64_t total = 0;
    for (const auto& t : tables) total += t.rows;
    return total;
  }
  // What happened to the freed space ("" for count()): e.g. returned to the file system,
  // or kept for reuse, in words for the operator.
  std::string space;
  // Rows of any user that name none (store/erasure_plan.h, kUnattributedRowsSql): this
  // erasure cannot tell whether they were this user's. Empty on a store without such rows.
  std::vector<TableRows> unattributed;
  // What of the erased rows may still be readable in the database's files after the
  // erasure committed, where, and what to do about it, in words for the operator; "" when
  // nothing (always on PostgreSQL, whose files the server owns).
  std::string left_in_files;
};

class Erasure {
 public:
  virtual ~Erasure() = default;
  // Whether erase() could run now: fails with ErrorKind::in_use while another process
  // applies the inbox. Changes nothing; `purge-user --deregister` asks before it calls the
  // service, so that a user is not deregistered there and left whole here.
  virtual Result<void> check_free() = 0;
  // What erase() would remove now; changes nothing (`--dry-run`).
  virtual Result<ErasureReport> count(std::string_view user_id) = 0;
  // What runs once the erasure can go on, before anything is removed: on SQLite with the
  // processing lock held (no `serve`, `rebuild` or `replay` can start applying) and the
  // write lock just found free (taken and given back: it is not held while this runs, which
  // may wait on the network); on PostgreSQL once no instance held the processing lock. A
  // failure erases nothing. `purge-user --deregister` calls the service here, so that a
  // store another process holds refuses the erasure before the service is called.
  using OnceLocked = std::function<Result<void>()>;
  // Removes it and records the erasure at `now_ms` (Unix ms). Fails with ErrorKind::in_use
  // while another process applies the inbox, ErrorKind::busy while one holds the write lock
  // past the busy timeout, or with `once_locked`'s failure (then nothing was removed).
  virtual Result<ErasureReport> erase(std::string_view user_id, int64_t now_ms,
                                      const OnceLocked& once_locked = {}) = 0;

  // SQLite: after the erasure, erase() rewrites the whole file (VACUUM), since deleting
  // rows leaves copies of them in the unused space of pages still in use; off, only the
  // freed pages go (docs/decisions/100-purge-user-rewrites-the-file.md). PostgreSQL: no
  // effect.
  void set_rewrite_file(bool rewrite) { rewrite_file_ = rewrite; }

 protected:
  bool rewrite_file_ = true;
};

}  // namespace hh::store
