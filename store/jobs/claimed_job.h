#pragma once
// A job as the fetcher runs it: the row of `jobs` (migration 003) plus what its payload
// says, read once when the job is claimed.
//
// Payload grammar (JSON object; written by the processor or, for a backfill, by `healthhook
// backfill` (backfill_job.h); progress keys by the fetcher):
//   workout_stream: {"workout_id":…, "user_id":…, "provider":…, "page":N}
//   backfill:       {"user_id":…, "resource":…, "provider":…, "start":"<RFC 3339>",
//                    "end":"<RFC 3339>", "page":N, "cursor":"…"|null, "next_start_ms":N|null}
//   parsing_job:    {"job_id":…, "user_id":…, "page":N}  (the job id is also job_key)
// The fetcher adds only the progress keys (`page`, `cursor`, `next_start_ms`) with
// SQLite's json_set, so keys it does not know survive. `page` counts the pages stored for
// the current trigger and names the next one; it never goes back (a re-queued done job
// keeps counting, so its pages get fresh message ids).
#include <cstdint>
#include <optional>
#include <string>

namespace hh::store {

inline constexpr std::string_view kKindWorkoutStream = "workout_stream";
inline constexpr std::string_view kKindBackfill = "backfill";
inline constexpr std::string_view kKindParsingJob = "parsing_job";  // job_key: the lab report parsing job's id

struct ClaimedJob {
  int64_t job_id = 0;
  std::string kind;          // kKindWorkoutStream | kKindBackfill | kKindParsingJob
  std::string job_key;
  int64_t attempts = 0;      // failed attempts since the job last made progress
  int64_t trigger_seq = 0;   // the delivery that (re)queued it; updates are conditional on it
  bool payload_valid = false;
  // From the payload; empty when absent.
  std::string workout_id, user_id, provider, resource, start, end;
  int64_t page = 0;
  std::optional<std::string> cursor;     // timeseries backfill: cursor of the next page
  std::optional<int64_t> next_start_ms;  // summary backfill: start of the next slice
  std::string team_id;  // the user's team (which [[service.teams]] entry applies); empty: unknown
};

}  // namespace hh::store
