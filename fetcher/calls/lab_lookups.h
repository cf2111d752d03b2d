#pragma once
// The lab lookups of the service (service interface): GET /v3/lab_tests/labs (the labs),
// GET /v3/lab_test/lab_account (the team's lab accounts), GET /v3/lab_tests/markers (the
// markers, by lab) and GET /v3/order/area/info (patient service centers and phlebotomy
// around a zip code). Read-only, team-level calls: no user involved.
//
// Each returns the service's answer as JSON text after checking what the interface shows
// of it; fields it does not show are passed through untouched.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "fetcher/calls/service_request.h"

namespace hh::fetcher {

// GET /v3/order/area/info `radius`: miles, one of these (default 25).
inline constexpr int64_t kAreaRadii[] = {10, 20, 25, 50, 100};
bool is_area_radius(int64_t miles);
// GET /v3/order/area/info `zip_code`: exactly five digits (^\d{5}$).
bool is_five_digit_zip(std::string_view zip);
// The `labs` values the interface lists (non-exhaustive: others are sent, with a warning
// by the caller).
bool is_listed_lab(std::string_view lab);

// An array of Lab objects, each with the interface's required fields (id, slug, name, …).
Result<std::string> list_labs(const ServiceAccess& access);

struct LabAccountFilter {
  std::optional<std::string> status, lab_account_id;
};
// The answer's shape is not shown in the interface: any JSON is passed on.
Result<std::string> list_lab_accounts(const ServiceAccess& access, const LabAccountFilter& filter);

// The answer's shape is not shown in the interface: any JSON is passed on.
Result<std::string> list_markers(const ServiceAccess& access, std::optional<std::string_view> lab_slug);

struct AreaQuery {
  std::string zip_code;
  std::optional<int64_t> radius;        // miles
  std::vector<std::string> labs;        // empty: the service's default
  std::optional<std::string> lab_account_id;
};
// Area information: an object with zip_code, phlebotomy and central_labs.
Result<std::string> area_info(const ServiceAccess& access, const AreaQuery& query);

}  // namespace hh::fetcher
