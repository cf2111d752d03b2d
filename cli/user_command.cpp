// healthhook user update | deregister: the service's user-management calls beside
// `refresh` (service interface: PATCH /v2/user/{user_id}, DELETE /v2/user/{user_id}/{provider}).
//
//   healthhook user update USER_ID [--fallback-time-zone TZ] [--fallback-birth-date DATE]
//                                  [--ingestion-start DATE] [--ingestion-end DATE]
//                                  [--client-user-id ID] [--team TEAM_ID]
//   healthhook user deregister USER_ID PROVIDER [--team TEAM_ID]
//
// update sends exactly the fields given; the value `null` clears one. Checked first: the
// time zone is a name of the system's tz database, dates are YYYY-MM-DD with the start not
// after the end, and a client_user_id that looks like an e-mail address or a phone number
// is refused (the interface forbids personal data there). Prints {"user_id","sent","answer"}.
//
// deregister stops the service's connection of USER_ID to PROVIDER without erasing
// anything here: the connection row is marked deregistered (with the time) and that
// change goes to the change feed (cli/deregistration_record.h; nothing is recorded when
// the database file does not exist). For apple_health_kit, health_connect and
// samsung_health it adds the interface's caveat (no effect in the SDK's Auto Connect mode).
// Prints {"user_id","provider","deregistered","recorded_seq","applied"}.
//
// The user's team decides the base URL and key (cli/service_access.h). Exit 0 done, 1 the
// call failed or the service answered success=false, 2 bad input or configuration
// (nothing is sent then).
#include <algorithm>
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/deregistration_record.h"
#include "fetcher/recovery_input.h"
#include "cli/service_access.h"
#include "cli/service_input.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "fetcher/base_url.h"
#include "fetcher/service_calls.h"
#include "store/database_location.h"

namespace hh::cli {
namespace {

// The value that clears a field (JSON null).
constexpr std::string_view kClear = "null";

struct UserUpdateFlags {
  SettingsFlags settings;
  std::string user_id;
  // In the order of fetcher::kUserUpdateFields.
  std::optional<std::string> fallback_time_zone, fallback_birth_date, ingestion_start, ingestion_end, client_user_id;
  std::optional<std::string> team;
};

struct UserDeregisterFlags {
  SettingsFlags settings;
  std::string user_id;
  std::string provider;
  std::optional<std::string> team;
};

// The fields to send, each checked; nullopt values clear.
Result<fetcher::UserUpdate> checked_update(const UserUpdateFlags& flags) {
  const std::pair<std::string_view, const std::optional<std::string>*> given[] = {
      {"fallback_time_zone", &flags.fallback_time_zone}, {"fallback_birth_date", &flags.fallback_birth_date},
      {"ingestion_start", &flags.ingestion_start},       {"ingestion_end", &flags.ingestion_end},
      {"client_user_id", &flags.client_user_id}};
  fetcher::UserUpdate fields;
  for (const auto& [name, value] : given) {
    if (!*value) continue;
    if (**value == kClear) {
      fields.emplace_back(name, std::nullopt);
      continue;
    }
    std::string option = "--" + std::string(name);
    std::replace(option.begin(), option.end(), '_', '-');
    Result<void> checked;
    if (name == "fallback_time_zone") checked = check_time_zone(option, **value);
    else if (name == "client_user_id") checked = check_client_user_id(**value);
    else checked = check_date(option, **value);
    if (!checked) return fail(ErrorKind::data, checked.error());
    fields.emplace_back(name, **value);
  }
  if (fields.empty()) {
    return fail(ErrorKind::data, "nothing to update: give at least one of --fallback-time-zone, "
                                 "--fallback-birth-date, --ingestion-start, --ingestion-end, --client-user-id");
  }
  const bool both_dates = flags.ingestion_start && flags.ingestion_end && *flags.ingestion_start != kClear &&
                          *flags.ingestion_end != kClear;
  if (both_dates && *flags.ingestion_start > *flags.ingestion_end) {  // YYYY-MM-DD sorts as text
    return fail(ErrorKind::data, "--ingestion-start " + *flags.ingestion_start + " is after --ingestion-end " +
                                     *flags.ingestion_end);
  }
  return fields;
}

int run_user_update(const UserUpdateFlags& flags) {
  constexpr std::string_view kCommand = "user update";
  if (auto checked = fetcher::check_user_id(flags.user_id); !checked) return report_call_failure(kCommand, checked.error(), ErrorKind::data);
  auto fields = checked_update(flags);
  if (!fields) return report_call_failure(kCommand, fields.error(), ErrorKind::data);
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  auto access = service_access_or_report(*settings, kCommand, team_of_user(*settings, flags.user_id, flags.team));
  if (!access) return kExitBadConfig;
  auto answer = fetcher::update_user(*access, flags.user_id, *fields);
  if (!answer) return report_call_failure(kCommand, answer.error(), answer.error_kind());
  std::string sent;
  json::ObjectWriter sent_object(sent);
  for (const auto& [name, value] : *fields) {
    if (value) {
      sent_object.string(name, *value);
    } else {
      sent_object.null(name);
    }
  }
  sent_object.close();
  std::string out;
  json::ObjectWriter(out).string("user_id", flags.user_id).raw("sent", sent).raw("answer", *answer).close();
  print_json_line(out);
  return kExitOk;
}

int run_user_deregister(const UserDeregisterFlags& flags) {
  constexpr std::string_view kCommand = "user deregister";
  if (auto checked = fetcher::check_user_id(flags.user_id); !checked) return report_call_failure(kCommand, checked.error(), ErrorKind::data);
  std::vector<std::string> warnings;
  if (auto checked = fetcher::check_provider(flags.provider, warnings, "provider"); !checked) {
    return report_call_failure(kCommand, checked.error(), ErrorKind::data);
  }
  auto settings = load_settings_or_report(flags.settings, kCommand);
  if (!settings) return kExitBadConfig;
  for (const auto& warning : warnings) report_error(kCommand, "warning: " + warning);
  auto access = service_access_or_report(*settings, kCommand, team_of_user(*settings, flags.user_id, flags.team));
  if (!access) return kExitBadConfig;
  auto deregistered = fetcher::deregister_user(*access, flags.user_id, flags.provider);
  if (!deregistered) return report_call_failure(kCommand, deregistered.error(), deregistered.error_kind());
  if (!*deregistered) {
    report_error(kCommand, "the service answered success=false to deregistering " + flags.user_id + " from " +
                               flags.provider);
    return kExitFailure;
  }
  const int64_t at_ms = unix_now_ms();
  std::string url;
  if (auto base = fetcher::BaseUrl::parse(access->service.base_url)) {
    if (auto path = fetcher::build_path(*base, {"v2", "user", flags.user_id, flags.provider})) url = base->full_url(*path);
  }
  std::optional<RecordedDeregistration> recorded;
  if (!store::names_missing_file(settings->database)) {
    auto stored = record_deregistration(*settings, flags.user_id, flags.provider, url, at_ms);
    if (!stored) {
      report_error(kCommand, "the service deregistered " + flags.user_id + " from " + flags.provider +
                                 ", but recording it in the database failed: " + stored.error());
      return kExitFailure;
    }
    recorded = *stored;
  }
  std::string out;
  json::ObjectWriter object(out);
  object.string("user_id", flags.user_id).string("provider", flags.provider).boolean("deregistered", true);
  if (recorded) {
    object.integer("recorded_seq", recorded->seq).boolean("applied", recorded->applied);
  } else {
    object.null("recorded_seq").boolean("applied", false);
  }
  object.close();
  print_json_line(out);
  if (!recorded) {
    report_error(kCommand, "note: " + store::loggable_location(settings->database) +
                               " does not exist: the deregistration is not recorded there");
  } else if (!recorded->applied && !recorded->not_applied_because.empty()) {
    report_error(kCommand, "note: stored as seq " + std::to_string(recorded->seq) +
                               ", not applied yet (" + recorded->not_applied_because +
                               "): the next `serve`, `rebuild` or `replay` marks the connection row");
  } else if (!recorded->applied) {
    report_error(kCommand, "note: another healthhook process applies this database's inbox; it marks the "
                           "connection row (stored as seq " + std::to_string(recorded->seq) + ")");
  }
  if (fetcher::is_sdk_provider(flags.provider)) {
    report_error(kCommand, "note: " + flags.provider +
                               " is connected through the mobile SDK: in its default Auto Connect mode this "
                               "deregistration has no effect (disconnect in the SDK's Explicit Connect mode, or pause "
                               "or sign out on the device)");
  }
  return kExitOk;
}

}  // namespace

void add_user_command(CLI::App& app, int& exit_code) {
  auto* user = app.add_subcommand("user", "Update a user or deregister them from a provider at the service");
  user->require_subcommand(1);

  auto update = std::make_shared<UserUpdateFlags>();
  auto* update_command = user->add_subcommand("update", "Update the user's fields at the service (PATCH /v2/user/{id}); "
                                                        "exactly the fields given, `null` clears one");
  add_settings_flags(*update_command, update->settings, false);
  update_command->add_option("user_id", update->user_id, "The service's user id (a UUID)")->required();
  update_command->add_option("--fallback-time-zone", update->fallback_time_zone,
                             "IANA time zone for sources without one, e.g. Europe/Berlin");
  update_command->add_option("--fallback-birth-date", update->fallback_birth_date, "YYYY-MM-DD");
  update_command->add_option("--ingestion-start", update->ingestion_start, "Start of data ingestion, YYYY-MM-DD");
  update_command->add_option("--ingestion-end", update->ingestion_end, "End of data ingestion, YYYY-MM-DD");
  update_command->add_option("--client-user-id", update->client_user_id,
                             "Your own id for the user (no e-mail address or phone number)");
  update_command->add_option("--team", update->team, "The user's team id, for [[service.teams]] (default: the team the user's deliveries named)");
  update_command->callback([update, &exit_code] { exit_code = run_user_update(*update); });

  auto deregister = std::make_shared<UserDeregisterFlags>();
  auto* deregister_command = user->add_subcommand(
      "deregister", "Deregister the user from a provider at the service (DELETE /v2/user/{id}/{provider}); erases nothing");
  add_settings_flags(*deregister_command, deregister->settings, false);
  deregister_command->add_option("user_id", deregister->user_id, "The service's user id (a UUID)")->required();
  deregister_command->add_option("provider", deregister->provider, "The provider's slug, e.g. oura")->required();
  deregister_command->add_option("--team", deregister->team, "The user's team id, for [[service.teams]] (default: the team the user's deliveries named)");
  deregister_command->callback([deregister, &exit_code] { exit_code = run_user_deregister(*deregister); });
}

}  // namespace hh::cli
