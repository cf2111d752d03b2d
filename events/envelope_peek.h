#pragma once
// Reads $.event_type (and, when asked, $.team_id) at ingest, before the delivery is
// stored, so the inbox row and the metrics know them from the start. Best effort: the
// processor does the full, validating parse later; a body without a readable event_type
// is still stored.
#include <optional>
#include <string>
#include <string_view>

namespace hh::events {

struct EnvelopePeek {
  std::optional<std::string> event_type;
  std::optional<std::string> team_id;  // only with `with_team`
};

// `with_team`: read $.team_id too, for the per-team silence gauge of [[service.teams]]. It
// costs a walk past `data` (the envelope puts team_id after it), so only when asked.
EnvelopePeek peek_envelope(std::string_view body, bool with_team);

inline std::optional<std::string> peek_event_type(std::string_view body) {
  return peek_envelope(body, false).event_type;
}

}  // namespace hh::events
