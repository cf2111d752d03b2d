#pragma once
// Reads timeseries samples with their series names (`healthhook query samples`, the read
// API's timeseries pages). Two orders, both without a sort in SQLite:
//
//  - by_series (export): every matching series in name order (user, resource, provider,
//    source type), each series' samples in time order along the `samples` primary key.
//    Constant memory for any number of rows.
//  - by_time (pages): the series of ONE user and resource merged into one time order,
//    ties broken by series id, resumable after a SamplePosition. Each series is read along
//    its own primary-key range and merged here, so a page costs O(limit × series) however
//    far into the data the cursor is (a single ORDER BY t_ms would sort everything after
//    the cursor on every page).
//
// Each row also carries its series' identity columns (005-identity.sql), joined per series,
// not per sample: the series' source_id, the user's client_user_id and the provider's
// name from `providers`. Output shows them on request (StoredSample::with_identity).
//
// Lifetime: the connection must outlive the query, stay where it is (the query keeps its
// address), and is used by one thread at a time.
// Views in a StoredSample are valid until the next next()/start() call.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/sqlite/connection.h"

namespace hh::store {

struct SampleFilter {
  std::optional<std::string> user_id;
  std::optional<std::string> resource;
  std::optional<std::string> provider;
  std::optional<std::string> source_type;
  std::optional<int64_t> since_ms;  // inclusive, on the sample's instant (t_ms)
  std::optional<int64_t> until_ms;  // exclusive
};

// Where a by_time page ended: the next page starts after this sample.
struct SamplePosition {
  int64_t t_ms = 0;
  int64_t series_id = 0;
};

enum class ValueType { null, integer, real, text };

struct StoredSample {
  int64_t series_id = 0;
  std::string_view user_id, resource, provider, source_type;
  int64_t t_ms = 0;
  std::optional<int64_t> timezone_offset;
  ValueType value_type = ValueType::null;  // `value` keeps what was sent: integer, float or text
  int64_t value_integer = 0;
  double value_real = 0;
  std::string_view value_text;
  std::optional<std::string_view> unit, type;
  std::optional<int64_t> start_ms, end_ms;
  std::optional<double> systolic, diastolic;  // blood_pressure
  std::optional<std::string_view> extra;      // JSON object text
  int64_t seq = 0;
  // Identity columns (NULL when unknown): $.data.source_id of the series (an integer as
  // the service sends it, else its text), users.client_user_id, providers.name.
  std::optional<int64_t> source_id;
  std::optional<std::string_view> source_id_text;
  std::optional<std::string_view> client_user_id, provider_name;
  bool with_identity = false;  // set by the caller: output adds source_id, client_user_id, provider_name
};

class SampleQuery {
 public:
  static Result<SampleQuery> create(sqlite::Connection& db);
  SampleQuery(SampleQuery&&) noexcept;
  SampleQuery& operator=(SampleQuery&&) noexcept;
  ~SampleQuery();

  Result<void> start_by_series(const SampleFilter& filter);
  // Requires filter.user_id and filter.resource (one user's series of one resource).
  Result<void> start_by_time(const SampleFilter& filter, std::optional<SamplePosition> after);

  // False when there are no more rows.
  Result<bool> next(StoredSample& row);
  // Resets the statements of a query stopped early (ends its read snapshot).
  void finish();

 private:
  struct State;
  explicit SampleQuery(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace hh::store
