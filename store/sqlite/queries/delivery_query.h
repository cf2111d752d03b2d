#pragma once
// Reads inbox rows: one by message id (GET /v1/deliveries/{message_id}), and the rows of a
// time window in seq order: `healthhook capture` (webhook deliveries only; rows the
// fetcher stored, origin 'fetch', are not deliveries and are not exported, see
// replay/capture_file.h) and `healthhook query deliveries` (every row, optionally of one
// processing status).
//
// The window export steps through `deliveries` in seq (rowid) order, never sorting: the
// received_at index only finds the first and last seq of the window. Bodies are read one
// row at a time, so memory stays flat for any inbox size.
//
// Lifetime: the connection must outlive the query; one thread at a time. Views are valid
// until the next call.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct DeliveryFilter {
  std::optional<int64_t> since_ms;             // inclusive, on received_at
  std::optional<int64_t> until_ms;             // exclusive
  std::optional<std::string> event_type_glob;  // SQLite GLOB: * ? [...], case-sensitive
  std::optional<std::string> status;           // pending | processed | invalid | ignored | unknown
  bool webhooks_only = true;                   // false: fetched rows too
};

struct StoredDelivery {
  int64_t seq = 0;
  std::string_view message_id, origin;
  int64_t received_at_ms = 0;
  std::optional<int64_t> webhook_timestamp;  // Unix seconds
  std::optional<std::string_view> event_type, status, family, error;
  std::string_view headers;  // JSON object as stored
  std::string_view body;     // raw bytes
};

class DeliveryQuery {
 public:
  static Result<DeliveryQuery> create(sqlite::Connection& db);

  // The row with this message id; false when there is none. The row stays valid until
  // the next call.
  Result<bool> find(std::string_view message_id, StoredDelivery& row);

  // Starts the export of a window. `first_seq`/`last_seq` (for progress) are set to the
  // window's seq range, or 0/0 when it is empty.
  Result<void> start_export(const DeliveryFilter& filter, int64_t& first_seq, int64_t& last_seq);
  Result<bool> next(StoredDelivery& row);
  void finish();

 private:
  DeliveryQuery(sqlite::Statement by_id, sqlite::Statement bounds, sqlite::Statement window)
      : by_id_(std::move(by_id)), bounds_(std::move(bounds)), window_(std::move(window)) {}
  sqlite::Statement by_id_;
  sqlite::Statement bounds_;
  sqlite::Statement window_;
};

}  // namespace hh::store
