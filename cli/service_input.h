#pragma once
// The input checks of the commands that call the rest of the service's interface (user
// update, link-code, teams, connections, lab reports and lookups), made before any
// request. A refusal is one line naming the option (the caller prints it as
// "healthhook <command>: <line>" and exits with kExitBadConfig). Values are quoted back
// only where they are not secret.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hh::cli {

// An IANA time zone name the system's tz database knows ($TZDIR, else
// /usr/share/zoneinfo): a TZif file under that name ("Europe/Berlin", "UTC").
Result<void> check_time_zone(std::string_view option, std::string_view name);

// A calendar date YYYY-MM-DD (as the service's date fields are written).
Result<void> check_date(std::string_view option, std::string_view text);

// client_user_id must not hold personal data (service interface, User): refused when it
// looks like an e-mail address (local part, '@', a domain with a dot) or a phone number
// (7 to 15 digits written with a leading '+', or with the separators of a written number,
// or a leading 0 and at least 9 digits). Plain numbers and UUIDs pass.
Result<void> check_client_user_id(std::string_view id);

// An RFC 3339 date-time with an offset ("2024-05-01T10:00:00Z") later than `now_ms`.
Result<int64_t> check_future_time(std::string_view option, std::string_view text, int64_t now_ms);

// A comma-separated option value split into its items (empty items dropped).
std::vector<std::string> split_list(const std::vector<std::string>& values);

// A UUID, for an option (--org-id, --lab-account-id).
Result<void> check_uuid_option(std::string_view option, std::string_view text);

}  // namespace hh::cli
