#pragma once
// Which deliveries must reach a receiver in their capture order when `replay --to` sends
// several at once. Latest-wins compares seq, the order of receipt, so two deliveries that
// touch the same derived row must arrive in capture order. A delivery's rows belong to the
// user its data names (`data.user_id`: samples, summaries, connections, …) and to the user
// its envelope names (`user_id`: that user's client id and team in `users`); almost always
// the same user. Deliveries of different users may overtake each other, those of one user
// may not; bodies that name no user (or are not JSON) share the empty key, and so keep
// their order among themselves. A delivery whose envelope and data name two users could
// share a row with either user's deliveries: it is sent alone, after everything before it
// and before everything after it.
#include <string>

namespace hh::replay {

struct OrderingKey {
  std::string user;          // the lane's key: the envelope's user_id, else data.user_id
  bool two_users = false;    // the envelope and the data name different users
};

// `body` is padded in place for simdjson (its capacity may grow); its content is unchanged.
OrderingKey ordering_key(std::string& body);

}  // namespace hh::replay
