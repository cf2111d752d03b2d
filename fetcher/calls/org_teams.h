#pragma once
// The organization's teams, from the management endpoint (service interface:
// GET {management_url}/v1/org/{org_id}/team, header X-Management-Key; a team API key is
// not accepted there). Pages follow `next_cursor` until it is null.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "fetcher/calls/service_request.h"
#include "fetcher/service_values.h"

namespace hh::fetcher {

// The header the management key goes in (service interface, Authentication 2).
inline constexpr std::string_view kManagementKeyHeader = "X-Management-Key";
// The regions the listing filters by (enum `us`, `eu`).
inline constexpr std::string_view kTeamRegions[] = {"us", "eu"};
// search_query: at most this many characters of the allowed set.
inline constexpr size_t kTeamSearchMaxChars = 80;

// An item of the team list; `region` is kept as sent (a new region is shown, not refused).
struct OrgTeam {
  std::string id, name, created_on, region;
};

// Why `text` does not match the interface's search_query pattern
// ^[A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u00FF0-9(),/:'|&_\-\s\u2019]{0,80}$ (as UTF-8;
// \s is Unicode white space); empty when it does.
std::string team_search_problem(std::string_view text);

struct TeamListing {
  std::vector<std::string> regions;   // each "us" or "eu" (checked by the caller); empty: all
  std::optional<std::string> search;  // checked by the caller (team_search_problem)
  int64_t max_pages = kMaxCursorPages;  // service_values.h; tests lower it
};

// Every team of `org_id` through all pages. `management` is [management]'s URL and key
// (key_name "management key"). A page without `teams` or `next_cursor`, an item without
// its four fields or whose id is not a UUID, a cursor that repeats, or more than
// `listing.max_pages` pages is an error. A team listed twice with the same fields is kept
// once (first place); twice with different fields is an error.
Result<std::vector<OrgTeam>> list_org_teams(const ServiceAccess& management, std::string_view org_id,
                                            const TeamListing& listing);

}  // namespace hh::fetcher
