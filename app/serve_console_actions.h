#pragma once
// The console's actions in `serve` (console/console_actions.h), each the library call its
// command makes:
//   forward-requeue   destination, and `ids` (comma-separated outbox ids) or `state`
//                     (dead | dropped)                   = healthhook forward requeue
//   forward-pause, forward-resume   destination          = healthhook forward pause|resume DEST
//   jobs-requeue-dead (optionally `job_id`: that job)    = healthhook jobs requeue --all-dead | ID
//   backfill          user_id, resources (comma-separated), since, optional until and
//                     provider                           = healthhook backfill
//   refresh           user_id                            = healthhook refresh
// backfill and refresh check their input with fetcher/recovery_input.h, as the commands do.
// Each opens its store handle for the call, beside the writer, like the command does.
#include <memory>
#include <string>
#include <vector>

#include "config/secrets.h"
#include "config/settings.h"
#include "console/console_actions.h"
#include "store/database_location.h"
#include "store/outbox.h"

namespace hh::app {

class ServeConsoleActions final : public console::ConsoleActions {
 public:
  // `settings` and `secrets`: [service], its teams and their API keys (refresh).
  ServeConsoleActions(store::Database database, const config::Settings& settings, const config::Secrets& secrets);

  Result<std::string> run(const console::ActionRequest& request) override;

 private:
  Result<std::string> forward_requeue(const console::ActionRequest& request);
  Result<std::string> jobs_requeue(const console::ActionRequest& request);
  Result<std::string> forward_pause(const console::ActionRequest& request);
  Result<std::string> backfill(const console::ActionRequest& request);
  Result<std::string> refresh(const console::ActionRequest& request);
  std::string team_of(const std::string& user_id);
  Result<std::string> destination_of(const console::ActionRequest& request) const;

  const store::Database database_;
  const std::vector<config::ForwardSettings> forwards_;  // the [[forward]] blocks, for destination_of
  std::vector<store::ForwardRule> forward_rules_;  // for requeueing dropped ranges, as the store writes them
  const config::ServiceSettings service_;
  const std::string base_dir_;
  const std::string api_key_;
  const std::vector<std::string> team_api_keys_;
};

}  // namespace hh::app
