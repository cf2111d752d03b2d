#include "store/jobs/backfill_job.h"

#include "common/json_writer.h"
#include "common/timestamp.h"

namespace hh::store {

void backfill_job_key(std::string& out, const BackfillWindow& window) {
  out.clear();
  out.append(window.user_id).append("/").append(window.resource).append("/").append(window.provider);
  out.append("/").append(std::to_string(window.start_ms)).append("/").append(std::to_string(window.end_ms));
}

void backfill_job_payload(std::string& out, const BackfillWindow& window) {
  out.clear();
  json::ObjectWriter payload(out);
  payload.string("user_id", window.user_id)
      .string("resource", window.resource)
      .string("provider", window.provider)
      .string("start", format_rfc3339_ms(window.start_ms))
      .string("end", format_rfc3339_ms(window.end_ms));
  if (!window.team_id.empty()) payload.string("team_id", window.team_id);  // absent, not null: the notice's payload
  payload.close();
}

}  // namespace hh::store
