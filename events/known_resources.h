#pragma once
// The data resources of the service's event catalog (reference notes §1): the ten summary
// resources and the ~50 timeseries. The catalog grows ("enumerations are
// non-exhaustive"), so a `daily.data.<r>` event for a resource outside it whose shape
// is neither a summary nor a timeseries batch is not an error: it is kept with status
// `unknown`, like any event type we do not know. A known resource with such a shape is
// `invalid` (a required member is missing).
#include <optional>
#include <string_view>

#include "rows/delivery_rows.h"

namespace hh::events {

bool is_known_resource(std::string_view resource);
// Reference notes §1's summaries, but workout_stream (a shallow notice of its own): their
// events' `data` is the summary object, whatever members it holds (meal's `data` member
// is the meal's, even as an array).
bool is_summary_resource(std::string_view resource);

// The interface's `supported_resources` also lists resources whose event payload neither
// it nor the reference notes show: sleep_stream (a member of sleep summaries),
// match_review (labtest.match_review.*), device_legacy; and the record resources
// (connection, order, result, appointment, device), whose own events have families of
// their own but whose daily.data.<resource> form is not shown. A data event naming one is
// classified with the family returned here and stored as `unknown` (counted by family),
// never parsed by its shape: a guess would put rows in the wrong table. nullopt for any
// other resource.
std::optional<rows::Family> unshown_resource_family(std::string_view resource);

}  // namespace hh::events
