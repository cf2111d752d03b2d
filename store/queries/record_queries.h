#pragma once
// Reads the record tables the CLI exports: connections (`healthhook query connections`)
// and lab orders (`healthhook query orders`), in primary-key order (no sort, constant
// memory).
//
// Lifetime: the connection must outlive the query; one thread at a time. Views are valid
// until the next next()/start call.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct ConnectionFilter {
  std::optional<std::string> user_id;
  std::optional<std::string> provider;
};

struct StoredConnection {
  std::string_view user_id, provider, status;
  std::optional<std::string_view> external_user_id, error_type, error_message;
  std::optional<std::string_view> resource_availability;  // JSON object
  std::string_view event_type;
  int64_t seq = 0;
  std::string_view data;  // JSON object
};

class ConnectionQuery {
 public:
  static Result<ConnectionQuery> create(sqlite::Connection& db);
  void start(const ConnectionFilter& filter);
  Result<bool> next(StoredConnection& row);

 private:
  explicit ConnectionQuery(sqlite::Statement all) : all_(std::move(all)) {}
  sqlite::Statement all_;
};

struct LabOrderFilter {
  std::optional<std::string> user_id;
};

struct StoredLabOrder {
  std::string_view id;
  std::optional<std::string_view> user_id, team_id, status, last_event_status, status_detail, interpretation;
  int64_t seq = 0;
  std::string_view data;  // JSON object
};

class LabOrderQuery {
 public:
  static Result<LabOrderQuery> create(sqlite::Connection& db);
  void start(const LabOrderFilter& filter);
  Result<bool> next(StoredLabOrder& row);

 private:
  explicit LabOrderQuery(sqlite::Statement all) : all_(std::move(all)) {}
  sqlite::Statement all_;
};

}  // namespace hh::store
