#pragma once
// The input checks `healthhook backfill` and `healthhook refresh` (and the console's
// backfill and refresh actions: app/serve_console_actions.h) make before they queue or send
// anything, and the backfill windows they queue. A refusal is one line naming the option (the caller prints it as
// "healthhook <command>: <line>" and exits with kExitBadConfig). A value outside the
// service's non-exhaustive lists is not refused: it gets a warning line instead.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/jobs/backfill_job.h"
#include "store/read_store.h"

namespace hh::fetcher {

// USER_ID must be a UUID (the service's user ids are). `name`: how the caller names the
// value in the error (the console's form field: "user_id").
Result<void> check_user_id(std::string_view user_id, std::string_view name = "USER_ID");

// A calendar date written YYYY-MM-DD (nothing else: no time, no offset) as its midnight,
// UTC, in Unix ms. `option` names the flag in the error.
Result<int64_t> parse_date_option(std::string_view option, std::string_view text);

// The last day of a backfill (--until), as parse_date_option reads it, refused when the
// window through it would end past the last time RFC 3339 writes (9999-12-31 ends at the
// next midnight, in year 10000: it was queued as ending in year 0000, and the job died).
Result<int64_t> parse_last_day_option(std::string_view option, std::string_view text);

// Each --resource value: refused when empty or when it names records, not data (a backfill
// could not fetch it); a value outside the service's resource list adds a line to
// `warnings`. Repeated values are dropped. The resources, in the order given. `option`: how
// the caller names the values in errors (the console's form field: "resources").
Result<std::vector<std::string>> check_resources(const std::vector<std::string>& resources,
                                                 std::vector<std::string>& warnings,
                                                 std::string_view option = "--resource");

// --provider: refused when empty; a value outside the service's provider enum adds a line
// to `warnings`.
// `option`: how the command line names the value in errors ("--provider", "PROVIDER").
Result<void> check_provider(std::string_view provider, std::vector<std::string>& warnings,
                            std::string_view option = "--provider");

// --timeout of a refresh: within the service's range.
Result<void> check_refresh_timeout(int64_t timeout_s);

inline constexpr int64_t kDayMs = 86'400'000;

// A backfill without [service]'s API key is queued with this warning: `serve` then runs no
// follow-ups, so its jobs wait until the key is set. Queued all the same (not refused as a
// refresh is): a backfill is a request for later, and the key may be on its way.
inline constexpr std::string_view kNoApiKeyForBackfill =
    "service.api_key_file is not set: serve runs no follow-ups without the service's API key, so these jobs wait "
    "until it is set";

// The providers of the user's stored connections, in name order (a backfill names no
// provider: it asks each one the user is connected to).
Result<std::vector<std::string>> connected_providers(store::ReadStore& reader, const std::string& user_id);

// The windows a backfill queues: one per resource and provider, from `start_ms` (a
// midnight, UTC) to the end of the day `last_day_ms`, so the same request on the same
// day names the same jobs. The windows view the strings given.
std::vector<store::BackfillWindow> backfill_windows(const std::string& user_id, const std::vector<std::string>& resources,
                                                    const std::vector<std::string>& providers, int64_t start_ms,
                                                    int64_t last_day_ms, const std::string& team);

}  // namespace hh::fetcher
