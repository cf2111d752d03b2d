#include "app/follow_ups.h"

#include "events/parse_limits.h"

namespace hh::app {

Result<std::unique_ptr<FollowUps>> open_follow_ups(const config::Settings& settings, const config::Secrets& secrets,
                                                   Ingest& ingest) {
  if (secrets.api_key.empty()) return std::unique_ptr<FollowUps>();
  auto follow_ups = std::make_unique<FollowUps>();
  auto jobs = ingest.store->open_job_queue();
  if (!jobs) return Error{jobs.error(), ErrorKind::other};
  follow_ups->job_queue = std::move(*jobs);
  fetcher::FetcherOptions options;
  options.database = ingest.database;
  options.service = settings.service;
  options.api_key = secrets.api_key;
  for (size_t i = 0; i < settings.service.teams.size(); ++i) {
    const config::TeamSettings& team = settings.service.teams[i];
    options.teams.push_back({team.team_id, team.base_url, secrets.team_api_keys.at(i)});
  }
  options.base_dir = settings.base_dir;
  options.max_page_bytes = events::ParseLimits{}.max_document_bytes;
  options.observe_request = [metrics = &follow_ups->fetch_metrics](std::string_view outcome, double seconds) {
    metrics->record(outcome, seconds);
  };
  auto created = fetcher::Fetcher::create(std::move(options), *ingest.writer, *ingest.inbox, *follow_ups->job_queue);
  if (!created) return fail(ErrorKind::data, created.error());
  follow_ups->fetcher = std::move(*created);
  return follow_ups;
}

}  // namespace hh::app
