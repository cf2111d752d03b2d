#pragma once
// The data resources of the service's event catalog (reference notes §1): the ten summary
// resources and the ~50 timeseries. The catalog grows ("enumerations are
// non-exhaustive"), so a `daily.data.<r>` event for a resource outside it whose shape
// is neither a summary nor a timeseries batch is not an error: it is kept with status
// `unknown`, like any event type we do not know. A known resource with such a shape is
// `invalid` (a required member is missing).
#include <string_view>

namespace hh::events {

bool is_known_resource(std::string_view resource);

}  // namespace hh::events
