#pragma once
// Which captured headers `replay --to` sends, and which lines it cannot send at all: one
// check for both replays, so that a capture replayed offline stores exactly the lines the
// receiver could be sent (the spec's "identical results"). A header the client sets itself
// is replaced, never sent as captured; any other must be an HTTP header (RFC 9110: a token
// for a name, no CR, LF or NUL in a value), or the line is refused.
#include <string>
#include <string_view>
#include <vector>

#include "replay/capture_file.h"

namespace hh::replay {

// Host, Content-Length, hop-by-hop headers, Expect and the old signature headers: the
// client writes its own.
bool is_replaced_header(std::string_view name);

// Why the line cannot be re-sent ("headers.X-Bad: cannot be sent as an HTTP header"), or
// empty when every header it would send is an HTTP header.
std::string unsendable_header(const std::vector<CaptureHeader>& headers);

}  // namespace hh::replay
