#pragma once
// The column lists of the tables with one row per key (summaries, connections, devices,
// lab_orders, lab_appointments, lab_results, lab_parsing_jobs, backfills, providers), in
// bind order: the key columns, then the values with `seq` (and `data`) last. Both
// backends build their latest-wins statements from these (store/sqlite/derived/latest_wins.h,
// store/postgres/derived/pg_latest_wins.h) and bind each row's fields in this order.
#include <array>
#include <span>
#include <string_view>

namespace hh::store {

// A latest-wins table: column names are trusted identifiers, never values.
struct LatestWinsSpec {
  std::string_view table;
  std::span<const std::string_view> keys;    // the conflict target, bound first
  std::span<const std::string_view> values;  // the rest, bound after the keys, `seq` among them
  std::span<const std::string_view> indexed = {};  // those of `values` a secondary index holds
};

namespace columns {

using Names = std::string_view;

inline constexpr std::array<Names, 2> kSummaryKeys{"resource", "id"};
inline constexpr std::array<Names, 9> kSummaryValues{"user_id", "provider", "source_type", "calendar_date",
                                                     "start_ms", "end_ms",   "app_id",      "seq",
                                                     "data"};
// In the summaries_user_time index besides the key's resource.
inline constexpr std::array<Names, 2> kSummaryIndexed{"user_id", "calendar_date"};
inline constexpr std::array<Names, 2> kConnectionKeys{"user_id", "provider"};
inline constexpr std::array<Names, 9> kConnectionValues{"status",          "external_user_id",
                                                        "error_type",      "error_message",
                                                        "resource_availability", "deregistered_at",
                                                        "event_type",      "seq",
                                                        "data"};
inline constexpr std::array<Names, 1> kIdKey{"id"};
inline constexpr std::array<Names, 10> kDeviceValues{"user_id",      "provider",       "source_type", "app_id",
                                                     "device_manufacturer", "device_model", "device_version",
                                                     "device_id",    "seq",            "data"};
inline constexpr std::array<Names, 8> kLabOrderValues{"user_id",       "team_id",        "status", "last_event_status",
                                                      "status_detail", "interpretation", "seq",    "data"};
inline constexpr std::array<Names, 8> kLabAppointmentValues{"order_id", "user_id", "status", "event_status",
                                                            "start_at", "end_at",  "seq",    "data"};
inline constexpr std::array<Names, 1> kOrderIdKey{"order_id"};
inline constexpr std::array<Names, 6> kLabResultValues{"user_id", "sample_id", "status", "interpretation", "seq",
                                                       "data"};
inline constexpr std::array<Names, 8> kLabParsingJobValues{"user_id",     "status",  "failure_reason",
                                                           "needs_human_review", "is_reviewed", "results",
                                                           "seq",         "data"};
// In the lab_parsing_jobs_user index (`purge-user` finds the rows by it).
inline constexpr std::array<Names, 1> kLabParsingJobIndexed{"user_id"};
inline constexpr std::array<Names, 5> kBackfillKeys{"user_id", "resource", "provider", "start_ms", "end_ms"};
inline constexpr std::array<Names, 2> kBackfillValues{"is_final", "seq"};
inline constexpr std::array<Names, 1> kSlugKey{"slug"};
inline constexpr std::array<Names, 7> kProviderValues{"name", "description", "logo", "auth_type",
                                                      "supported_resources", "seq", "data"};

}  // namespace columns
}  // namespace hh::store
