#pragma once
// Secrets that an answer may echo back (an API key the service refused, an OAuth token in
// a bulk import's reason, a forwarding destination's token or secret) and that no log
// line, stored error or printed message may repeat. One matcher for every caller, so a
// form one of them learns to see (JSON escapes, an excerpt cut inside a secret) is seen
// by all.
#include <span>
#include <string>
#include <string_view>

namespace hh {

inline constexpr std::string_view kRedactedMark = "[redacted]";

// `text` with every occurrence of each non-empty secret replaced by kRedactedMark: as
// sent, or as a JSON string writes it with any escapes (`\/`, `\"`, `\u002f`, a non-ASCII
// character as `\u00e9` or a surrogate pair). Text cut short may end inside a secret: a
// start of one of at least four bytes at the very end is replaced too. Secrets are tried
// in the order given: put a longer one before a part of it.
std::string redacted(std::string_view text, std::span<const std::string> secrets);

}  // namespace hh
