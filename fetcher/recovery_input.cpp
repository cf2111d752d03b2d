#include "fetcher/recovery_input.h"

#include <algorithm>

#include "common/timestamp.h"
#include "fetcher/service_calls.h"
#include "fetcher/service_values.h"

namespace hh::fetcher {
namespace {

// The service's providers and resources are named by slugs ("oura", "blood_oxygen").
// Starting with a letter or digit: "-x" or "--until" is an option that took the place of a
// value ("--resource , --until …").
bool is_slug(std::string_view text) {
  const auto letter_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return !text.empty() && letter_or_digit(text.front()) &&
         std::all_of(text.begin(), text.end(), [&](char c) { return letter_or_digit(c) || c == '_' || c == '-'; });
}

bool leap_year(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

unsigned days_in_month(int64_t year, unsigned month) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap_year(year) ? 29 : kDays[month - 1];
}

// `text` quoted for an error line, control characters replaced.
std::string quoted_input(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) out.push_back(static_cast<unsigned char>(c) < 0x20 ? '?' : c);
  return out + "\"";
}

}  // namespace

Result<void> check_user_id(std::string_view user_id, std::string_view name) {
  if (!is_uuid(user_id)) {
    return fail(ErrorKind::data,
                std::string(name) + ": " + quoted_input(user_id) + " is not a UUID (the service's user ids are)");
  }
  return {};
}

Result<int64_t> parse_date_option(std::string_view option, std::string_view text) {
  const auto refuse = [&] {
    return fail(ErrorKind::data, std::string(option) + ": expected a date YYYY-MM-DD, got " + quoted_input(text));
  };
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return refuse();
  int64_t fields[3] = {0, 0, 0};
  const size_t starts[3] = {0, 5, 8}, lengths[3] = {4, 2, 2};
  for (size_t f = 0; f < 3; ++f) {
    for (size_t i = starts[f]; i < starts[f] + lengths[f]; ++i) {
      if (text[i] < '0' || text[i] > '9') return refuse();
      fields[f] = fields[f] * 10 + (text[i] - '0');
    }
  }
  const int64_t year = fields[0];
  const auto month = static_cast<unsigned>(fields[1]);
  const auto day = static_cast<unsigned>(fields[2]);
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return refuse();
  return days_from_civil(year, month, day) * 86'400'000;
}

Result<std::vector<std::string>> check_resources(const std::vector<std::string>& resources,
                                                 std::vector<std::string>& warnings, std::string_view option) {
  const std::string name(option);
  std::vector<std::string> checked;
  for (const std::string& resource : resources) {
    if (resource.empty()) return fail(ErrorKind::data, name + ": empty value");
    if (fetcher::is_record_resource(resource)) {
      return fail(ErrorKind::data, name + ": " + quoted_input(resource) +
                                       " names records, not data; only data resources can be backfilled");
    }
    // Superseded by sleep_cycle (spec §3): its notices are stored `ignored` and fetch nothing, and
    // backfill queues what a notice would.
    if (resource == "hypnogram") {
      return fail(ErrorKind::data,
                  name + ": \"hypnogram\" is superseded by sleep_cycle (its notices are stored ignored, fetching "
                  "nothing)");
    }
    if (std::find(checked.begin(), checked.end(), resource) != checked.end()) continue;
    // Likewise every resource is a slug: "heart rate" or "a/b" would be queued and fail at
    // every attempt.
    if (!is_slug(resource)) {
      return fail(ErrorKind::data, name + ": " + quoted_input(resource) +
                                       " is not a resource slug (lower-case letters, digits, '_' and '-')");
    }
    if (!fetcher::is_listed_resource(resource)) {
      warnings.push_back(name + ": " + quoted_input(resource) +
                         " is not in the service's resource list; queued anyway (the list is non-exhaustive)");
    }
    checked.push_back(resource);
  }
  if (checked.empty()) return fail(ErrorKind::data, name + ": none given");
  return checked;
}

Result<int64_t> parse_last_day_option(std::string_view option, std::string_view text) {
  auto day = parse_date_option(option, text);
  if (!day) return day;
  if (*day + kDayMs > kLastRfc3339Ms) {
    return fail(ErrorKind::data, std::string(option) + ": a window through " + std::string(text) +
                                     " would end at its next midnight, past " + format_rfc3339_ms(kLastRfc3339Ms) +
                                     ", the last time RFC 3339 writes; give " +
                                     format_rfc3339_ms(kLastRfc3339Ms - kDayMs).substr(0, 10) + " or earlier");
  }
  return day;
}

Result<void> check_provider(std::string_view provider, std::vector<std::string>& warnings, std::string_view option) {
  const std::string name(option);
  if (provider.empty()) return fail(ErrorKind::data, name + ": empty value");
  // The list is non-exhaustive, but every provider is a slug: anything else is a typo,
  // refused before a request names it.
  if (!is_slug(provider)) {
    return fail(ErrorKind::data, name + ": " + quoted_input(provider) +
                                     " is not a provider slug (lower-case letters, digits, '_' and '-')");
  }
  if (!fetcher::is_listed_provider(provider)) {
    warnings.push_back(name + ": " + quoted_input(provider) +
                       " is not in the service's provider list; used anyway (the list is non-exhaustive)");
  }
  return {};
}

Result<void> check_refresh_timeout(int64_t timeout_s) {
  if (timeout_s < fetcher::kRefreshTimeoutMinS || timeout_s > fetcher::kRefreshTimeoutMaxS) {
    return fail(ErrorKind::data, "--timeout: " + std::to_string(timeout_s) + " is not between " +
                                     std::to_string(fetcher::kRefreshTimeoutMinS) + " and " +
                                     std::to_string(fetcher::kRefreshTimeoutMaxS) + " seconds");
  }
  return {};
}

Result<std::vector<std::string>> connected_providers(store::ReadStore& reader, const std::string& user_id) {
  store::RecordFilter filter;
  filter.user_id = user_id;
  auto& query = reader.connections();
  if (auto started = query.start(filter); !started) return fail(started);
  std::vector<std::string> providers;
  store::StoredConnection row;
  for (;;) {
    auto more = query.next(row);
    if (!more) return fail(more);
    if (!*more) break;
    providers.emplace_back(row.provider);
  }
  return providers;
}

std::vector<store::BackfillWindow> backfill_windows(const std::string& user_id, const std::vector<std::string>& resources,
                                                    const std::vector<std::string>& providers, int64_t start_ms,
                                                    int64_t last_day_ms, const std::string& team) {
  std::vector<store::BackfillWindow> windows;
  for (const auto& resource : resources) {
    for (const auto& provider : providers) {
      windows.push_back(store::BackfillWindow{user_id, resource, provider, start_ms, last_day_ms + kDayMs, team});
    }
  }
  return windows;
}

}  // namespace hh::fetcher
