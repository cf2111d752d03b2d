#pragma once
// Reads $.event_type at ingest, before the delivery is stored, so the inbox row and the
// metrics know the event type from the start. Best effort: the processor does the full,
// validating parse later; a body without a readable event_type is still stored.
#include <optional>
#include <string>
#include <string_view>

namespace hh::events {

std::optional<std::string> peek_event_type(std::string_view body);

}  // namespace hh::events
