#pragma once
// Which read endpoint a backfilled resource comes from (reference notes §1: "Summary" vs
// "Discrete/Interval timeseries"). Summaries: GET /v2/summary/{resource}/{user_id};
// everything else: the grouped timeseries endpoint. `workout_stream` is special: its
// backfill reads the workouts summaries, and the processor queues one stream job per
// workout found.
#include <string_view>

namespace hh::fetcher {

enum class BackfillSource { summaries, workouts_for_streams, timeseries };

// Unknown resources are read as timeseries: all but ten of the ~60 resources are, and
// the service adds timeseries far more often than summary types.
BackfillSource backfill_source(std::string_view resource);

}  // namespace hh::fetcher
