// The description of every table (store/schema/tables.h): the inbox and operational tables
// here, the tables with one row per key from their row descriptions (record_tables.h).
#include "store/schema/tables.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "store/schema/record_tables.h"

namespace hh::store::schema {
namespace {

constexpr Type kText = Type::text, kInt = Type::integer, kReal = Type::real, kBytes = Type::bytes,
               kScalar = Type::scalar;
constexpr bool kNull = true, kNotNull = false;

// ---- The inbox (SQLite 001, 004, 007, 009). `user_id`: whom a delivery names, recorded
// when it is applied (erasure finds the rows by it once the body is gone).

constexpr Column kInbox[] = {
    {"seq", kInt, kNotNull},          {"message_id", kText, kNotNull}, {"origin", kText, kNotNull},
    {"received_at", kInt, kNotNull},  {"webhook_timestamp", kInt, kNull}, {"event_type", kText, kNull},
    {"headers", kText, kNotNull},     {"body", kBytes, kNotNull},
    // The user's processing shard (decision 050), NULL where not assigned: PostgreSQL's
    // sessions share processing by it; SQLite's one writer applies everything.
    {"shard", kInt, kNull, Backends::postgres_only}};
constexpr Column kDeliveryOutcomes[] = {{"seq", kInt, kNotNull},
                                        {"status", kText, kNotNull},
                                        {"family", kText, kNull},
                                        {"error", kText, kNull},
                                        {"user_id", kText, kNull}};
constexpr Column kRemovedBodies[] = {{"seq", kInt, kNotNull},
                                     {"body_sha256", kText, kNotNull},
                                     {"body_bytes", kInt, kNotNull},
                                     {"removed_at_ms", kInt, kNotNull},
                                     {"user_id", kText, kNull}};
// rebuild_through: SQLite 018, PostgreSQL 014 (store/unfinished_rebuild.h).
constexpr Column kProcessorState[] = {
    {"id", kInt, kNotNull}, {"applied_seq", kInt, kNotNull}, {"rebuild_through", kInt, kNull}};
// Where body retention's walk stands (SQLite 016): one row, once it has removed a body.
constexpr Column kRetentionWalk[] = {{"id", kInt, kNotNull}, {"walked_seq", kInt, kNotNull}};
constexpr Column kProcessorShards[] = {{"shard", kInt, kNotNull}, {"applied_seq", kInt, kNotNull}};

// ---- Derived tables that are not one row per key (SQLite 002, 005, 009, 011).

constexpr Column kSeries[] = {{"series_id", kInt, kNotNull},   {"user_id", kText, kNotNull},
                              {"resource", kText, kNotNull},   {"provider", kText, kNotNull},
                              {"source_type", kText, kNotNull}, {"source_id", kScalar, kNull},
                              {"app_id", kText, kNull}};
constexpr Column kSamples[] = {{"series_id", kInt, kNotNull}, {"t_ms", kInt, kNotNull},
                               {"timezone_offset", kInt, kNull}, {"value", kScalar, kNull},
                               {"unit", kText, kNull},        {"type", kText, kNull},
                               {"start_ms", kInt, kNull},     {"end_ms", kInt, kNull},
                               {"systolic", kReal, kNull},    {"diastolic", kReal, kNull},
                               {"extra", kText, kNull},       {"seq", kInt, kNotNull}};
constexpr Column kWorkoutStreams[] = {{"workout_id", kText, kNotNull}, {"user_id", kText, kNull},
                                      {"provider", kText, kNull},      {"provider_id", kText, kNull},
                                      {"sport", kText, kNull},         {"notice_seq", kInt, kNull},
                                      {"fetched_seq", kInt, kNull},    {"point_count", kInt, kNull},
                                      {"seq", kInt, kNotNull}};
constexpr Column kStreamPoints[] = {{"workout_id", kText, kNotNull}, {"idx", kInt, kNotNull},
                                    {"time", kInt, kNull},           {"distance", kReal, kNull},
                                    {"heartrate", kReal, kNull},     {"velocity_smooth", kReal, kNull},
                                    {"lat", kReal, kNull},           {"lng", kReal, kNull},
                                    {"altitude", kReal, kNull},      {"cadence", kReal, kNull},
                                    {"power", kReal, kNull},         {"resistance", kReal, kNull},
                                    {"temperature", kReal, kNull}};
constexpr Column kChanges[] = {{"change_id", kInt, kNotNull}, {"seq", kInt, kNotNull},
                               {"table_name", kText, kNotNull}, {"row_key", kText, kNotNull},
                               {"op", kText, kNotNull},       {"row_count", kInt, kNotNull},
                               {"from_ms", kInt, kNull},      {"to_ms", kInt, kNull},
                               {"user_id", kText, kNull}};

// ---- Operational tables (SQLite 003, 006, 008, 009, 010, 011, 012).

constexpr Column kJobs[] = {{"job_id", kInt, kNotNull},
                            {"kind", kText, kNotNull},
                            {"job_key", kText, kNotNull},
                            {"state", kText, kNotNull},
                            {"attempts", kInt, kNotNull},
                            {"next_attempt_at", kInt, kNotNull},
                            {"last_error", kText, kNull},
                            {"trigger_seq", kInt, kNotNull},
                            {"payload", kText, kNotNull},
                            {"created_at", kInt, kNotNull},
                            {"updated_at", kInt, kNotNull},
                            {"user_id", kText, kNull},  // whom the job fetches for
                            // A running job's lease: instances share the queue (decision 030).
                            {"lease_until", kInt, kNull, Backends::postgres_only}};
constexpr Column kErasures[] = {{"erasure_id", kInt, kNotNull},
                                {"user_id", kText, kNotNull},
                                {"erased_at_ms", kInt, kNotNull},
                                {"row_counts", kText, kNotNull}};
constexpr Column kOutbox[] = {{"outbox_id", kInt, kNotNull},   {"destination", kText, kNotNull},
                              {"kind", kText, kNotNull},       {"seq", kInt, kNotNull},
                              {"event_type", kText, kNull},    {"table_name", kText, kNotNull},
                              {"row_key", kText, kNotNull},    {"op", kText, kNotNull},
                              {"row_count", kInt, kNotNull},   {"from_ms", kInt, kNull},
                              {"to_ms", kInt, kNull},          {"user_id", kText, kNull},
                              {"order_key", kText, kNull},     {"state", kText, kNotNull},
                              {"attempts", kInt, kNotNull},    {"created_at", kInt, kNotNull},
                              {"next_attempt_at", kInt, kNotNull}, {"post_id", kInt, kNull},
                              {"last_status", kInt, kNull},    {"last_error", kText, kNull},
                              {"head", kInt, kNull},           {"content", kText, kNull},
                              {"content_bytes", kInt, kNull}};
constexpr Column kOutboxDropped[] = {{"range_id", kInt, kNotNull},    {"destination", kText, kNotNull},
                                     {"first_seq", kInt, kNotNull},   {"last_seq", kInt, kNotNull},
                                     {"entries", kInt, kNotNull},     {"dropped_at", kInt, kNotNull}};

constexpr Column kForwardPauses[] = {{"destination", kText, kNotNull}, {"paused_at", kInt, kNotNull}};
constexpr Column kForwardPositions[] = {
    {"destination", kText, kNotNull},
    {"mode", kText, kNotNull},
    {"after_seq", kInt, kNotNull},
    {"writer_makes", kInt, kNotNull}};

constexpr std::string_view kSeqKey[] = {"seq"};
constexpr std::string_view kIdKey[] = {"id"};
constexpr std::string_view kShardKey[] = {"shard"};
constexpr std::string_view kSeriesKey[] = {"series_id"};
constexpr std::string_view kSamplesKey[] = {"series_id", "t_ms"};
constexpr std::string_view kWorkoutKey[] = {"workout_id"};
constexpr std::string_view kPointsKey[] = {"workout_id", "idx"};
constexpr std::string_view kChangesKey[] = {"change_id"};
constexpr std::string_view kJobsKey[] = {"job_id"};
constexpr std::string_view kErasuresKey[] = {"erasure_id"};
constexpr std::string_view kOutboxKey[] = {"outbox_id"};
constexpr std::string_view kOutboxDroppedKey[] = {"range_id"};
constexpr std::string_view kDestinationKey[] = {"destination"};
constexpr std::string_view kDestinationModeKey[] = {"destination", "mode"};

// A record table's columns and key, from its description.
template <typename Description>
struct Record {
  static constexpr auto columns = columns_of<Description::fields>();
  static constexpr auto key = names_of<Description::fields>(IsKey{});
  static Table table() {
    return Table{Description::name, columns, key, Role::derived, Description::user, true, Description::erasure};
  }
};

std::vector<Table> all_tables() {
  return {
      {"inbox", kInbox, kSeqKey, Role::inbox, "", true, {ErasedBy::their_delivery, kErasureInboxGroup}},
      {"delivery_outcomes", kDeliveryOutcomes, kSeqKey, Role::inbox, "user_id", true,
       {ErasedBy::their_delivery, kErasureInboxGroup}},
      {"removed_bodies", kRemovedBodies, kSeqKey, Role::inbox, "user_id", true,
       {ErasedBy::their_delivery, kErasureInboxGroup}},
      // Derived, parents first; `rebuild` empties them the other way round.
      {"changes", kChanges, kChangesKey, Role::derived, "user_id", true, {ErasedBy::user, 5}},
      Record<Providers>::table(),
      Record<Users>::table(),
      Record<Backfills>::table(),
      Record<LabParsingJobs>::table(),
      Record<LabResults>::table(),
      Record<LabAppointments>::table(),
      Record<LabOrders>::table(),
      Record<Devices>::table(),
      Record<Connections>::table(),
      {"stream_points", kStreamPoints, kPointsKey, Role::derived, "", true, {ErasedBy::their_workouts, 2}},
      {"workout_streams", kWorkoutStreams, kWorkoutKey, Role::derived, "user_id", true,
       {ErasedBy::their_workouts, 2, 1}},
      Record<Summaries>::table(),
      {"series", kSeries, kSeriesKey, Role::derived, "user_id", true, {ErasedBy::their_series, 0}},
      {"samples", kSamples, kSamplesKey, Role::derived, "", true, {ErasedBy::their_series, 0}},
      {"jobs", kJobs, kJobsKey, Role::operational, "user_id", true, {ErasedBy::user, 4}},
      {"erasures", kErasures, kErasuresKey, Role::operational, "user_id", true, {ErasedBy::kept, 0}},
      // Forwards not sent yet (dead and dropped ones too); one written before the outbox
      // knew its user is found by its delivery.
      {"outbox", kOutbox, kOutboxKey, Role::operational, "user_id", true, {ErasedBy::user_or_their_delivery, 5, 1}},
      {"outbox_dropped", kOutboxDropped, kOutboxDroppedKey, Role::operational, "", true},
      {"forward_pauses", kForwardPauses, kDestinationKey, Role::operational, "", true},
      // How far each destination's entries are made (015-forward-positions.sql): not
      // copied, `serve` on PostgreSQL writes the entries in the writer's transactions.
      {"forward_positions", kForwardPositions, kDestinationModeKey, Role::operational, "", false, {},
       Backends::sqlite_only},
      {"retention_walk", kRetentionWalk, kIdKey, Role::operational, "", true},
      {"processor_state", kProcessorState, kIdKey, Role::operational, "", false},
      {"processor_shards", kProcessorShards, kShardKey, Role::operational, "", false, {}, Backends::postgres_only},
  };
}

}  // namespace

std::span<const Table> tables() {
  static const std::vector<Table> all = all_tables();
  return all;
}

const Table* find_table(std::string_view name) {
  for (const Table& table : tables()) {
    if (table.name == name) return &table;
  }
  return nullptr;
}

std::span<const Table* const> erased_tables() {
  static const std::vector<const Table*> erased = [] {
    std::vector<const Table*> out;
    // Children before the tables they refer to (samples before series), then by group and
    // order within it.
    const auto all = tables();
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (it->erasure.by != ErasedBy::none && it->erasure.by != ErasedBy::kept) out.push_back(&*it);
    }
    std::stable_sort(out.begin(), out.end(), [](const Table* a, const Table* b) {
      return std::pair(a->erasure.group, a->erasure.order) < std::pair(b->erasure.group, b->erasure.order);
    });
    return out;
  }();
  return erased;
}

std::span<const std::string_view> derived_tables() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    const auto all = tables();
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (it->role == Role::derived) out.push_back(it->name);
    }
    return out;
  }();
  return names;
}

}  // namespace hh::store::schema
