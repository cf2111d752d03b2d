#pragma once
// Which read endpoint a backfilled resource comes from (reference notes §1: "Summary" vs
// "Discrete/Interval timeseries"; §3.1: the summary endpoints' shapes). Summaries:
// GET /v2/summary/{resource}/{user_id}, a window, {"<resource>": [...]} except
// {"meals": [...]} for meal; `profile` takes no window and answers one object;
// everything else: the grouped timeseries endpoint. `workout_stream` is special: its
// backfill reads the workouts summaries, and the processor queues one stream job per
// workout found.
#include <string_view>

namespace hh::fetcher {

enum class BackfillSource { summaries, single_summary, workouts_for_streams, timeseries };

// Unknown resources are read as timeseries: all but ten of the ~60 resources are, and
// the service adds timeseries far more often than summary types.
BackfillSource backfill_source(std::string_view resource);

// The member of a summaries page that holds the list: the resource's name, but "meals"
// for meal (the SDKs' ClientFacingMealResponse.meals).
std::string_view summary_items_key(std::string_view resource);

}  // namespace hh::fetcher
