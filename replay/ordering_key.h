#pragma once
// Which deliveries must reach a receiver in their capture order when `replay --to` sends
// several at once. Latest-wins compares seq, the order of receipt, so two deliveries that
// touch the same derived row must arrive in capture order. A delivery's rows belong to the
// user they are written under (`data.user_id`, else the envelope's `user_id`, read as the
// processor reads them: rows/delivery_user.h), and the envelope's user has its row in
// `users` (client id, team); almost always one user. Deliveries of different users may
// overtake each other, those of one user may not; bodies that name no user (or are not
// JSON) share the empty key, and so keep their order among themselves. A delivery that
// names two users could share a row with either user's deliveries: it is sent alone, after
// everything before it and before everything after it.
//
// Not covered: rows keyed by an id alone (a summary, a device, a lab order) that deliveries
// of two users both carry; the service's ids are its own per user, so a capture of its
// deliveries has none. `--concurrency 1` keeps every delivery in capture order.
#include <string>
#include <string_view>

namespace hh::replay {

struct OrderingKey {
  std::string user;        // the lane's key: the user the delivery's rows are written under
  bool two_users = false;  // the envelope names another user than its rows
};

OrderingKey ordering_key(std::string_view body);

}  // namespace hh::replay
