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

// Whether the text ends where its source ended, or was cut short (an excerpt of a longer
// answer): only cut text can end inside a secret.
enum class TextEnd { whole, cut_short };

// `text` with every occurrence of each non-empty secret replaced by kRedactedMark: as
// sent, or as a JSON string writes it with any escapes (`\/`, `\"`, `\u002f`, a non-ASCII
// character as `\u00e9` or a surrogate pair), or percent-encoded as a URL writes it
// (`%5F`, any byte). Occurrences that overlap (one secret the
// start of another) become one mark. Text `cut_short` may end inside a secret: a start of
// one of at least four bytes at its very end is replaced too. Not seen: a secret escaped
// twice (JSON inside a JSON string).
std::string redacted(std::string_view text, std::span<const std::string> secrets, TextEnd end = TextEnd::whole);
// The same in place, with no copy when `text` holds no secret (a fetched page of many
// megabytes is checked whole).
void redact_in_place(std::string& text, std::span<const std::string> secrets, TextEnd end = TextEnd::whole);

}  // namespace hh
