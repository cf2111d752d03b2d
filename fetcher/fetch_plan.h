#pragma once
// What a job fetches next, and what the job's progress is once that page is stored.
// Pure functions of the claimed job (store/jobs/claimed_job.h) and the page body, so
// restarts and retries are deterministic: the same job state always asks for the same page
// and stores it under the same message id.
//
//   workout_stream  GET {base}/v2/timeseries/workouts/{workout_id}/stream           1 page
//   backfill of a summary resource (resource_kinds.h)
//                   GET {base}/v2/summary/{resource}/{user_id}?start_date=&end_date=&provider=
//                   one page per slice of kSummarySliceDays of the window, oldest first;
//                   progress: next_start_ms; the list is under "meals" for meal
//   backfill of profile
//                   GET {base}/v2/summary/profile/{user_id}?provider=    1 page, one object
//   backfill of workout_stream
//                   the same on /v2/summary/workouts/{user_id}, kind workouts_for_streams
//   backfill of a timeseries resource
//                   GET {base}/v2/timeseries/{user_id}/{resource}/grouped?start_date=&end_date=
//                       &provider=[&cursor=]   following next_cursor until null; progress: cursor
//   parsing_job     GET {base}/lab_report/v1/parser/job/{job_id}  (job_id = the job_key)  1 page, one object
//
// Inbox rows (origin 'fetch'): message_id "fetch:<job_id>:<trigger_seq>:<page>", event_type
// "fetch.<kind>[.<resource>]", headers = the fetch context of events/delivery_parser.h.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "fetcher/base_url.h"
#include "store/jobs/claimed_job.h"
#include "store/jobs/job_queue.h"

namespace hh::fetcher {

// Summary endpoints have no cursor: a window of years is read in slices of this many
// days, so one response stays small and a restart repeats at most one slice.
inline constexpr int64_t kSummarySliceDays = 30;

struct PagePlan {
  int64_t page = 0;              // this page's number
  std::string target;            // path + query on the service's host
  std::string url;               // full URL, for the context and logs
  std::string message_id;
  std::string event_type;
  std::string context_json;      // deliveries.headers for the stored row
  std::string body_array;        // top-level member the body must have ("" = a stream)
  std::optional<int64_t> slice_end_ms;  // summaries: end of this slice
};

// The next page of `job`. A failure is final: the payload cannot be fetched as it is
// (missing field, bad window, unknown kind).
Result<PagePlan> plan_next_page(const store::ClaimedJob& job, const BaseUrl& base);

// Checks that `body` (already passed check_json) has the shape of `page`'s endpoint and
// returns the job's progress once the page is stored. Failures are the server's
// (retried): wrong shape, a cursor that is not a string or does not advance, a backfill
// page about another user or provider (page_owner.h).
Result<store::JobProgress> progress_after(const store::ClaimedJob& job, const PagePlan& page, std::string_view body);

}  // namespace hh::fetcher
