#pragma once
// Where the store records whom an inbox row is about: the one description that
// `purge-user` (store/erasure_plan.h; each backend's erasure) and the console's search by
// user (GET /v1/deliveries?user_id=: store/queries/delivery_query.h) both follow, so that
// the search lists the deliveries an erasure would remove, whatever retention left of
// their bodies (spec §11; docs/decisions/087-delivery-search-by-user-columns.md):
//   1. the columns first: a delivery is a user's when a row of kDeliveryUserRecords with
//      its seq names them;
//   2. a body only where no column can say: a row whose body is still there (no
//      removed-body record) and that has no outcome yet, or an invalid one (its outcome
//      names at most one user, the first; an invalid body may hold several), is read with
//      rows::delivery_names_user. Retention removes only bodies of applied rows, so such
//      a row has its body.
#include <span>
#include <string>
#include <string_view>

#include "rows/delivery_user.h"

namespace hh::store {

// A place that records a delivery's user: the rows of `from` (SQL valid on both backends)
// whose `user_column` names the user are about the delivery at `seq_column`.
struct DeliveryUserRecord {
  std::string_view from;
  std::string_view seq_column;
  std::string_view user_column;
};

inline constexpr DeliveryUserRecord kDeliveryUserRecords[] = {
    // Whom the delivery names, written by the processor with the outcome (a webhook's
    // $.user_id, else its $.data.user_id; a fetched row's context user_id).
    {"delivery_outcomes AS o", "o.seq", "o.user_id"},
    // Copied from the outcome when retention removes the body.
    {"removed_bodies AS r", "r.seq", "r.user_id"},
    // Whom the rows it wrote are about: a delivery whose envelope names another user than
    // its data has the envelope's in its outcome, and wrote the data's user's rows.
    {"changes AS c JOIN delivery_outcomes AS o ON o.seq = c.seq", "c.seq", "c.user_id"},
};

// `SELECT <seq> FROM <from> WHERE <user_column> <names_user>`: the seqs `record` holds for
// the user(s) `names_user` picks (" = ?1": one user as parameter 1).
inline std::string delivery_user_seqs(const DeliveryUserRecord& record, std::string_view names_user) {
  return "SELECT " + std::string(record.seq_column) + " FROM " + std::string(record.from) + " WHERE " +
         std::string(record.user_column) + std::string(names_user);
}

// True when no column can say every user of an inbox row, so its body is read (rule 2):
// `status` as the deliveries view gives it ('pending' without an outcome).
inline bool body_tells_delivery_users(std::string_view status, bool body_removed) {
  return !body_removed && (status == "pending" || status == "invalid");
}

// Rule 2 for one row: whether its body names one of `user_ids`.
inline bool body_names_one_of(std::string_view origin, std::string_view headers, std::string_view body,
                              std::span<const std::string> user_ids) {
  for (const std::string& user : user_ids) {
    if (rows::delivery_names_user(origin, headers, body, user)) return true;
  }
  return false;
}

}  // namespace hh::store
