#include "app/serve_console_actions.h"

#include <algorithm>
#include <charconv>

#include "common/json_writer.h"
#include "common/timestamp.h"
#include "fetcher/recovery_input.h"
#include "fetcher/service_calls.h"
#include "app/store_settings.h"
#include "store/open_readers.h"
#include "store/read_store.h"
#include "store/open_store.h"

namespace hh::app {
namespace {

std::optional<std::string_view> field(const console::ActionRequest& request, std::string_view name) {
  const auto it = request.fields.find(name);
  if (it == request.fields.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> parse_id(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

Error bad_request(std::string message) { return Error{std::move(message), ErrorKind::data}; }

// A field an action does not take is refused: a misspelt `job_id` (or a JSON body, read as
// one form field) left jobs-requeue-dead with no id, and it requeued every dead job.
Result<void> check_fields(const console::ActionRequest& request, std::initializer_list<std::string_view> fields) {
  for (const auto& [name, value] : request.fields) {
    if (std::find(fields.begin(), fields.end(), name) != fields.end()) continue;
    std::string taken;
    for (const std::string_view f : fields) taken += (taken.empty() ? "" : ", ") + std::string(f);
    // Named when it is a word; the sender's other bytes stay out of the answer and the log.
    const bool word = !name.empty() && name.size() <= 32 && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
    const std::string shown = word ? "unknown field \"" + name + "\"" : "a field whose name is not a word";
    return bad_request(shown + " (" + request.name + " takes " + taken +
                       "; fields are sent as a form, application/x-www-form-urlencoded)");
  }
  return {};
}

}  // namespace

ServeConsoleActions::ServeConsoleActions(store::Database database, const config::Settings& settings,
                                         const config::Secrets& secrets)
    : database_(std::move(database)),
      forwards_(settings.forwards),
      service_(settings.service),
      base_dir_(settings.base_dir),
      api_key_(secrets.api_key),
      team_api_keys_(secrets.team_api_keys) {
  // `serve` opened its store with these settings, so they were checked already.
  if (auto options = serve_store_options(settings)) forward_rules_ = std::move(options->forward_rules);
}

Result<std::string> ServeConsoleActions::run(const console::ActionRequest& request) {
  // Each action, what runs it and the fields it takes (docs/console.md).
  using Handler = Result<std::string> (ServeConsoleActions::*)(const console::ActionRequest&);
  struct Action {
    std::string_view name;
    Handler handler;
    std::initializer_list<std::string_view> fields;
  };
  static const Action kActions[] = {
      {"forward-requeue", &ServeConsoleActions::forward_requeue, {"destination", "state", "ids"}},
      {"forward-pause", &ServeConsoleActions::forward_pause, {"destination"}},
      {"forward-resume", &ServeConsoleActions::forward_pause, {"destination"}},
      {"jobs-requeue-dead", &ServeConsoleActions::jobs_requeue, {"job_id"}},
      {"backfill", &ServeConsoleActions::backfill, {"user_id", "resources", "since", "until", "provider"}},
      {"refresh", &ServeConsoleActions::refresh, {"user_id"}},
  };
  const auto action = std::find_if(std::begin(kActions), std::end(kActions),
                                   [&](const Action& a) { return a.name == request.name; });
  if (action == std::end(kActions)) return bad_request("this server has no action \"" + request.name + "\"");
  if (auto checked = check_fields(request, action->fields); !checked) return fail(checked);
  return (this->*action->handler)(request);
}

Result<std::string> ServeConsoleActions::destination_of(const console::ActionRequest& request) const {
  const auto name = field(request, "destination");
  if (!name) return bad_request("destination: required");
  // A name, or a position (1 = the first block), as `healthhook forward pause DEST` takes it.
  auto named = config::forward_named(forwards_, *name);
  if (!named) return bad_request("destination: no [[forward]] named or numbered \"" + std::string(*name) + "\"");
  return std::move(*named);
}

// As `healthhook forward requeue ID… | --dead | --dropped --destination NAME`.
Result<std::string> ServeConsoleActions::forward_requeue(const console::ActionRequest& request) {
  auto destination = destination_of(request);
  if (!destination) return fail(destination);
  const auto state = field(request, "state");
  const auto ids = field(request, "ids");
  if (state.has_value() == ids.has_value()) return bad_request("give ids or state (dead or dropped)");
  if (state && *state != "dead" && *state != "dropped") return bad_request("state: expected dead or dropped");
  auto outbox = store::open_outbox(database_);
  if (!outbox) return fail(outbox);
  const int64_t now = unix_now_ms();
  int64_t requeued = 0;
  if (state && *state == "dropped") {
    // As `forward requeue --dropped`: the dropped ranges' entries made again from the change
    // feed (or the inbox in deliveries mode), under new ids.
    const auto rule = std::find_if(forward_rules_.begin(), forward_rules_.end(),
                                   [&](const store::ForwardRule& r) { return r.destination == *destination; });
    if (rule == forward_rules_.end()) return bad_request("destination: no [[forward]] named \"" + *destination + "\"");
    auto made = (*outbox)->requeue_dropped(*rule);
    if (!made) return fail(made);
    return "{\"requeued\":" + std::to_string(made->recreated) + ",\"dropped\":" + std::to_string(made->dropped) +
           ",\"not_recreated\":" + std::to_string(made->not_recreated) + "}";
  }
  if (state) {
    store::OutboxSelection selection;
    selection.destination = *destination;
    selection.state = std::string(*state);
    auto count = (*outbox)->requeue(selection, now);
    if (!count) return fail(count);
    requeued = *count;
  } else {
    // Every id checked before any is requeued, as `forward requeue` does: an id that names
    // no entry, or one of another destination, refuses the whole action.
    std::vector<int64_t> checked;
    std::string_view rest = *ids;
    while (!rest.empty()) {
      const size_t comma = std::min(rest.find(','), rest.size());
      const auto id = parse_id(rest.substr(0, comma));
      rest.remove_prefix(std::min(comma + 1, rest.size()));
      if (!id) return bad_request("ids: expected outbox ids separated by commas");
      auto entry = (*outbox)->find(*id);
      if (!entry) return fail(entry);
      if (!*entry) return bad_request("ids: no outbox entry " + std::to_string(*id));
      if ((*entry)->destination != *destination) {
        return bad_request("ids: outbox entry " + std::to_string(*id) + " is not of destination " + *destination);
      }
      // Once each: "3,3,3" requeues one entry and says 1.
      if (std::find(checked.begin(), checked.end(), *id) == checked.end()) checked.push_back(*id);
    }
    int64_t already_pending = 0;
    for (const int64_t id : checked) {
      auto one = store::requeue_unless_pending(**outbox, id, now);
      if (!one) return fail(one);
      if (one->requeued == 0 && one->exists) ++already_pending;
      requeued += one->requeued;
    }
    if (already_pending > 0) {
      return "{\"requeued\":" + std::to_string(requeued) + ",\"already_pending\":" + std::to_string(already_pending) +
             "}";
    }
  }
  return "{\"requeued\":" + std::to_string(requeued) + "}";
}

// As `healthhook forward pause|resume DEST`.
Result<std::string> ServeConsoleActions::forward_pause(const console::ActionRequest& request) {
  auto destination = destination_of(request);
  if (!destination) return fail(destination);
  auto outbox = store::open_outbox(database_);
  if (!outbox) return fail(outbox);
  const bool pause = request.name == "forward-pause";
  auto changed = (*outbox)->set_paused(*destination, pause, unix_now_ms());
  if (!changed) return fail(changed);
  return std::string("{\"paused\":") + (pause ? "true" : "false") + ",\"changed\":" + (*changed ? "true" : "false") + "}";
}

// As `healthhook jobs requeue --all-dead` (or `… requeue ID` with job_id).
Result<std::string> ServeConsoleActions::jobs_requeue(const console::ActionRequest& request) {
  auto admin = store::open_job_admin(database_);
  if (!admin) return fail(admin);
  const int64_t now = unix_now_ms();
  // Present but empty is no id, not "every dead job": only a form without the field asks for that.
  if (const auto given = request.fields.find("job_id"); given != request.fields.end()) {
    const auto id = parse_id(given->second);
    if (!id) return bad_request("job_id: expected a job id");
    auto status = (*admin)->requeue(*id, now);
    if (!status) return fail(status);
    switch (*status) {
      case store::RequeueStatus::requeued: return std::string("{\"requeued\":1}");
      case store::RequeueStatus::not_found: return bad_request("no job " + std::to_string(*id));
      case store::RequeueStatus::running: return bad_request("job " + std::to_string(*id) + " is running");
    }
  }
  auto count = (*admin)->requeue_dead(now);
  if (!count) return fail(count);
  return "{\"requeued\":" + std::to_string(*count) + "}";
}

// The team a user's deliveries named (users.team_id), "" when none: as `refresh` without --team.
std::string ServeConsoleActions::team_of(const std::string& user_id) {
  if (service_.teams.empty()) return {};
  return store::stored_team_of(database_, user_id);
}

// As `healthhook backfill USER_ID --resource R,… --since DATE [--until DATE] [--provider P]`.
Result<std::string> ServeConsoleActions::backfill(const console::ActionRequest& request) {
  const std::string user_id(field(request, "user_id").value_or(""));
  if (auto checked = fetcher::check_user_id(user_id, "user_id"); !checked) return bad_request(checked.error());
  std::vector<std::string> given;
  std::string_view rest = field(request, "resources").value_or("");
  while (!rest.empty()) {
    const size_t comma = std::min(rest.find(','), rest.size());
    std::string_view one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    given.emplace_back(one);
    rest.remove_prefix(std::min(comma + 1, rest.size()));
  }
  if (given.empty()) return bad_request("resources: give at least one (e.g. heartrate,sleep)");
  std::vector<std::string> warnings;
  // Without [service]'s key `serve` runs no follow-ups: queued, and the answer says they wait.
  if (api_key_.empty()) warnings.emplace_back(fetcher::kNoApiKeyForBackfill);
  auto resources = fetcher::check_resources(given, warnings, "resources");
  if (!resources) return bad_request(resources.error());
  auto start_ms = fetcher::parse_date_option("since", field(request, "since").value_or(""));
  if (!start_ms) return bad_request(start_ms.error());
  int64_t last_day_ms = unix_now_ms() / fetcher::kDayMs * fetcher::kDayMs;  // today, UTC
  const auto until = field(request, "until");
  if (until) {
    auto parsed = fetcher::parse_last_day_option("until", *until);
    if (!parsed) return bad_request(parsed.error());
    last_day_ms = *parsed;
  }
  // Named by what was sent: without until the window ends today, and a since after it
  // was refused as "until is before since", a field the form had not sent.
  const std::string since_text(field(request, "since").value_or(""));
  if (last_day_ms < *start_ms && until) return bad_request("until: " + std::string(*until) + " is before since " + since_text);
  if (last_day_ms < *start_ms) {
    return bad_request("since: " + since_text + " is after today (" + format_rfc3339_ms(last_day_ms).substr(0, 10) +
                       ", UTC), where a backfill without until ends");
  }
  std::vector<std::string> providers;
  if (const auto provider = field(request, "provider")) {
    if (auto checked = fetcher::check_provider(*provider, warnings, "provider"); !checked) {
      return bad_request(checked.error());
    }
    providers.emplace_back(*provider);
  } else {
    auto reader = store::open_read_store(database_);
    if (!reader) return fail(reader);
    auto found = fetcher::connected_providers(**reader, user_id);
    if (!found) return fail(found);
    providers = std::move(*found);
    if (providers.empty()) {
      return bad_request("no connection of this user is stored, so there is no provider to ask; give a provider");
    }
  }
  const std::string team;  // the jobs use the team the user's deliveries named, as the command without --team
  const auto windows = fetcher::backfill_windows(user_id, *resources, providers, *start_ms, last_day_ms, team);
  auto admin = store::open_job_admin(database_);
  if (!admin) return fail(admin);
  auto results = (*admin)->queue_backfills(windows, unix_now_ms());
  if (!results) return fail(results);
  std::string out = "{\"jobs\":[";
  for (size_t i = 0; i < results->size(); ++i) {
    if (i) out.push_back(',');
    const auto& r = (*results)[i];
    const char* outcome = r.outcome == store::QueuedBackfill::Outcome::queued     ? "queued"
                          : r.outcome == store::QueuedBackfill::Outcome::requeued ? "requeued"
                                                                                  : "pending";
    out += "{\"job_id\":" + std::to_string(r.job_id) + ",\"outcome\":\"" + outcome + "\"}";
  }
  // The warnings themselves, as the command prints them (a resource or provider not in the
  // service's lists, queued anyway): a count alone told the operator nothing.
  out += "],\"warnings\":[";
  for (size_t i = 0; i < warnings.size(); ++i) {
    if (i) out.push_back(',');
    json::append_string(out, warnings[i]);
  }
  out += "]}";
  return out;
}

// As `healthhook refresh USER_ID`: the user's team's base URL and key, else [service]'s.
Result<std::string> ServeConsoleActions::refresh(const console::ActionRequest& request) {
  const std::string user_id(field(request, "user_id").value_or(""));
  if (auto checked = fetcher::check_user_id(user_id, "user_id"); !checked) return bad_request(checked.error());
  fetcher::ServiceAccess access{service_, api_key_, base_dir_};
  if (const config::TeamSettings* team = config::find_team(service_, team_of(user_id))) {
    access.service.base_url = team->base_url;
    access.api_key = team_api_keys_[static_cast<size_t>(team - service_.teams.data())];
  }
  if (access.api_key.empty()) return bad_request("service.api_key_file is not set: the service needs the API key");
  auto result = fetcher::refresh_user(access, user_id, fetcher::kRefreshTimeoutDefaultS);
  if (!result) return fail(result.error_kind() == ErrorKind::data ? ErrorKind::data : ErrorKind::other, result.error());
  const auto list = [](const std::vector<std::string>& names) {
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i) out.push_back(',');
      json::append_string(out, names[i]);
    }
    return out + "]";
  };
  // A refresh the service says did not succeed fails, as `healthhook refresh` exits 1: the
  // operator is told, with what the service listed.
  if (!result->success) {
    const std::string reason = "the service reported that the refresh did not succeed (refreshed " +
                               list(result->refreshed_sources) + ", in progress " +
                               list(result->in_progress_sources) + ", failed " + list(result->failed_sources) + ")";
    return fail(ErrorKind::other, reason);
  }
  return std::string("{\"success\":true,\"refreshed\":") + list(result->refreshed_sources) +
         ",\"in_progress\":" + list(result->in_progress_sources) + ",\"failed\":" + list(result->failed_sources) +
         "}";
}

}  // namespace hh::app
