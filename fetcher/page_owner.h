#pragma once
// A backfill page must be about the job's user and provider. The processor stores a
// summary under the user_id and provider its item names (events/fetched_pages.cpp), and a
// grouped sample under its group's provider: an answer about someone else (a mix-up at the
// service or in a cache before it) would replace that user's rows, or file another
// provider's samples as this user's. Checked before the page is stored, like refresh's
// answer (service_calls.cpp), with the same words:
//   unexpected answer: user_id "X" is not the user asked for, at sleep[0]
//   unexpected answer: provider "polar" is not the provider asked for, at groups.polar
//
// What names a user or provider, read as the processor reads it (keys unescaped; every
// occurrence of a repeated key, since the processor keeps the last):
//   summaries, workouts, profile   each item's user_id; source.provider, source.slug, a
//                                  bare string source, the flat source_provider
//   grouped timeseries             a top-level user_id (when the service sends one); each
//                                  group's key, its source (as above) and user_id
// A member that is absent, null or "" names nobody: the processor gives such an item the
// job's user and provider. Items are not checked against the window: the service may
// answer items that overlap it. A workout stream names no user (reference notes §3), and a
// parsing job's answer is checked by its id (common/parsing_job_answer.h).
#include <string_view>

#include "common/result.h"
#include "fetcher/fetch_plan.h"
#include "store/jobs/claimed_job.h"

namespace hh::fetcher {

// `body` (already passed check_json and progress_after's shape checks) of `page` is about
// `job`'s user and provider. A failure is the service's, retried like a wrong shape.
Result<void> check_page_owner(const store::ClaimedJob& job, const PagePlan& page, std::string_view body);

}  // namespace hh::fetcher
