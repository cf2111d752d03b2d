#pragma once
// Which deliveries must reach a receiver in their capture order when `replay --to` sends
// several at once. Latest-wins compares seq, the order of receipt, so two deliveries that
// touch the same derived row must arrive in capture order; every derived row belongs to
// one user (samples, summaries, connections, devices, lab rows, backfills, streams all
// carry the user), so deliveries of different users may overtake each other and those of
// one user may not. The key is the envelope's `user_id`, else `data.user_id`; bodies with
// neither (or not JSON) share the empty key, and so keep their order among themselves.
#include <string>

namespace hh::replay {

// `body` is padded in place for simdjson (its capacity may grow); its content is unchanged.
std::string ordering_key(std::string& body);

}  // namespace hh::replay
