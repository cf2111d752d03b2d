// reset_derived (sqlite_processing_store.h): the first half of `rebuild`, and the mark that
// says so until the second half is done (store/unfinished_rebuild.h).
#include "store/sqlite/derived/derived_tables.h"
#include "store/sqlite/sqlite_processing_store.h"

namespace hh::store {

Result<void> reset_derived(sqlite::Connection& write_db, ResetOptions options) {
  auto txn = sqlite::Transaction::begin(write_db);
  if (!txn) return fail(txn);
  if (auto cleared = clear_derived_tables(write_db); !cleared) return cleared;
  if (!options.keep_statuses) {
    // Every delivery back to 'pending' (no outcome row).
    auto reset = write_db.exec("DELETE FROM delivery_outcomes");
    if (!reset) return reset;
  }
  // Unfinished until the newest row is applied again (store/unfinished_rebuild.h); an
  // empty inbox leaves nothing to apply, and no mark.
  if (auto reset = write_db.exec("UPDATE processor_state SET applied_seq = 0, "
                                 "rebuild_through = (SELECT max(seq) FROM inbox) WHERE id = 1");
      !reset) {
    return reset;
  }
  return txn->commit();
}

}  // namespace hh::store
