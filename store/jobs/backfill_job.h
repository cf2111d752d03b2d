#pragma once
// The key and payload of a backfill job (the grammar: store/jobs/claimed_job.h), written
// in one place so that a job queued by a historical.data.* notice and one queued by
// `healthhook backfill` for the same window are the same job: the key decides whether a
// second request finds the first one, and the payload is what the fetcher reads.
//
//   job_key  "user_id/resource/provider/start_ms/end_ms"  (also the backfills change-feed key)
//   payload  {"user_id":…,"resource":…,"provider":…,"start":"<RFC 3339>","end":"<RFC 3339>"
//             [,"team_id":…]}   (team_id: `backfill --team`; a notice's job finds the team
//                               through the user, store/sqlite/jobs/job_store.cpp)
#include <cstdint>
#include <string>
#include <string_view>

namespace hh::store {

// One window of one resource from one provider; the views must outlive the calls below.
struct BackfillWindow {
  std::string_view user_id;
  std::string_view resource;
  std::string_view provider;
  int64_t start_ms = 0;  // Unix ms, UTC
  int64_t end_ms = 0;
  std::string_view team_id;  // "" unless a command names the user's team (not part of the key)
};

void backfill_job_key(std::string& out, const BackfillWindow& window);
void backfill_job_payload(std::string& out, const BackfillWindow& window);

}  // namespace hh::store
