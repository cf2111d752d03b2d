#include "store/sqlite/queries/sample_query.h"

#include <limits>

namespace hh::store {
namespace {

constexpr int64_t kMinMs = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max();
// One user's series of one resource: providers × source types. Far more means a mistake
// (or an attack on the read API), not data.
constexpr size_t kMaxMergedSeries = 1000;

// A series and its identity columns: columns 0-4 name it, 5 source_id, 6 client_user_id,
// 7 provider name. One primary-key lookup in users and providers per series.
constexpr std::string_view kSeriesColumns =
    "SELECT s.series_id, s.user_id, s.resource, s.provider, s.source_type, s.source_id, u.client_user_id, p.name "
    "FROM series AS s LEFT JOIN users AS u ON u.user_id = s.user_id LEFT JOIN providers AS p ON p.slug = s.provider ";

// Every series matching the optional filters, in name order (the unique index's order).
const std::string kAllSeries = std::string(kSeriesColumns) +
    "WHERE (?1 IS NULL OR s.user_id = ?1) AND (?2 IS NULL OR s.resource = ?2) "
    "AND (?3 IS NULL OR s.provider = ?3) AND (?4 IS NULL OR s.source_type = ?4) "
    "ORDER BY s.user_id, s.resource, s.provider, s.source_type";

// One user's series of one resource (an index lookup).
const std::string kUserSeries = std::string(kSeriesColumns) +
    "WHERE s.user_id = ?1 AND s.resource = ?2 "
    "AND (?3 IS NULL OR s.provider = ?3) AND (?4 IS NULL OR s.source_type = ?4) "
    "ORDER BY s.series_id";

// One series' samples in [from, until), along the primary key (series_id, t_ms).
constexpr std::string_view kSeriesSamples =
    "SELECT t_ms, timezone_offset, value, unit, type, start_ms, end_ms, systolic, diastolic, extra, seq "
    "FROM samples WHERE series_id = ?1 AND t_ms >= ?2 AND t_ms < ?3 ORDER BY t_ms";

void bind_optional(sqlite::Statement& s, int index, const std::optional<std::string>& value) {
  if (value) {
    s.bind(index, std::string_view(*value));
  } else {
    s.bind_null(index);
  }
}

std::optional<double> optional_real(const sqlite::Statement& s, int column) {
  if (s.column_is_null(column)) return std::nullopt;
  return s.column_double(column);
}

// Identity columns of a series row (kSeriesColumns 5-7), viewing the statement.
struct SeriesIdentity {
  std::optional<int64_t> source_id;
  std::optional<std::string_view> source_id_text, client_user_id, provider_name;
};

SeriesIdentity read_identity(const sqlite::Statement& s) {
  SeriesIdentity out;
  if (s.column_type(5) == SQLITE_INTEGER) {
    out.source_id = s.column_int(5);
  } else {
    out.source_id_text = s.column_optional_text(5);
  }
  out.client_user_id = s.column_optional_text(6);
  out.provider_name = s.column_optional_text(7);
  return out;
}

void set_identity(StoredSample& row, const SeriesIdentity& identity) {
  row.source_id = identity.source_id;
  row.source_id_text = identity.source_id_text;
  row.client_user_id = identity.client_user_id;
  row.provider_name = identity.provider_name;
}

std::optional<std::string> copy(std::optional<std::string_view> text) {
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

std::optional<std::string_view> view(const std::optional<std::string>& text) {
  return text ? std::optional<std::string_view>(*text) : std::nullopt;
}

// Columns of kSeriesSamples into `row` (the series fields are set by the caller).
void read_sample(const sqlite::Statement& s, StoredSample& row) {
  row.t_ms = s.column_int(0);
  row.timezone_offset = s.column_optional_int(1);
  switch (s.column_type(2)) {
    case SQLITE_NULL: row.value_type = ValueType::null; break;
    case SQLITE_INTEGER:
      row.value_type = ValueType::integer;
      row.value_integer = s.column_int(2);
      break;
    case SQLITE_FLOAT:
      row.value_type = ValueType::real;
      row.value_real = s.column_double(2);
      break;
    default:  // text (a blob would be read as its bytes)
      row.value_type = ValueType::text;
      row.value_text = s.column_text(2);
  }
  row.unit = s.column_optional_text(3);
  row.type = s.column_optional_text(4);
  row.start_ms = s.column_optional_int(5);
  row.end_ms = s.column_optional_int(6);
  row.systolic = optional_real(s, 7);
  row.diastolic = optional_real(s, 8);
  row.extra = s.column_optional_text(9);
  row.seq = s.column_int(10);
}

}  // namespace

struct SampleQuery::State {
  State(sqlite::Connection& connection, sqlite::Statement all, sqlite::Statement user)
      : db(&connection), all_series(std::move(all)), user_series(std::move(user)) {}

  // A series being merged (by_time).
  struct Head {
    int64_t series_id = 0;
    std::string user_id, resource, provider, source_type;
    std::optional<int64_t> source_id;
    std::optional<std::string> source_id_text, client_user_id, provider_name;
    size_t statement = 0;  // index into samples
    bool has_row = false;
  };

  sqlite::Connection* db;
  sqlite::Statement all_series;
  sqlite::Statement user_series;
  std::vector<sqlite::Statement> samples;  // grows to the number of merged series

  enum class Mode { idle, by_series, by_time } mode = Mode::idle;
  int64_t since_ms = kMinMs;
  int64_t until_ms = kMaxMs;
  bool in_series = false;        // by_series: samples[0] is bound to the current series
  std::vector<Head> heads;       // by_time
  std::optional<size_t> to_step;  // by_time: the head whose row was handed out last

  Result<sqlite::Statement*> statement(size_t index) {
    while (samples.size() <= index) {
      auto prepared = db->prepare(kSeriesSamples);
      if (!prepared) return fail(prepared.error());
      samples.push_back(std::move(*prepared));
    }
    return &samples[index];
  }

  void reset_all() {
    all_series.reset();
    user_series.reset();
    for (auto& s : samples) s.reset();
    in_series = false;
    heads.clear();
    to_step.reset();
  }

  Result<bool> next_by_series(StoredSample& row) {
    for (;;) {
      sqlite::Statement& samples_of = samples[0];
      if (!in_series) {
        auto has_series = all_series.step();
        if (!has_series) return fail(has_series.error());
        if (!*has_series) {
          all_series.reset();
          mode = Mode::idle;
          return false;
        }
        samples_of.bind(1, all_series.column_int(0)).bind(2, since_ms).bind(3, until_ms);
        in_series = true;
      }
      auto has_row = samples_of.step();
      if (!has_row) return fail(has_row.error());
      if (*has_row) {
        // The series row stays current while its samples are read: its views stay valid.
        row.series_id = all_series.column_int(0);
        row.user_id = all_series.column_text(1);
        row.resource = all_series.column_text(2);
        row.provider = all_series.column_text(3);
        row.source_type = all_series.column_text(4);
        set_identity(row, read_identity(all_series));
        read_sample(samples_of, row);
        return true;
      }
      samples_of.reset();
      in_series = false;
    }
  }

  Result<bool> next_by_time(StoredSample& row) {
    if (to_step) {
      Head& head = heads[*to_step];
      auto has_row = samples[head.statement].step();
      if (!has_row) return fail(has_row.error());
      head.has_row = *has_row;
      to_step.reset();
    }
    std::optional<size_t> best;
    int64_t best_t = 0;
    for (size_t i = 0; i < heads.size(); ++i) {
      if (!heads[i].has_row) continue;
      const int64_t t = samples[heads[i].statement].column_int(0);
      // Heads are in series-id order, so the first of equal times has the lower id.
      if (!best || t < best_t) {
        best = i;
        best_t = t;
      }
    }
    if (!best) {
      for (auto& s : samples) s.reset();
      mode = Mode::idle;
      return false;
    }
    const Head& head = heads[*best];
    row.series_id = head.series_id;
    row.user_id = head.user_id;
    row.resource = head.resource;
    row.provider = head.provider;
    row.source_type = head.source_type;
    set_identity(row, SeriesIdentity{head.source_id, view(head.source_id_text), view(head.client_user_id),
                                     view(head.provider_name)});
    read_sample(samples[head.statement], row);
    to_step = best;
    return true;
  }
};

SampleQuery::SampleQuery(std::unique_ptr<State> state) : state_(std::move(state)) {}
SampleQuery::SampleQuery(SampleQuery&&) noexcept = default;
SampleQuery& SampleQuery::operator=(SampleQuery&&) noexcept = default;
SampleQuery::~SampleQuery() = default;

Result<SampleQuery> SampleQuery::create(sqlite::Connection& db) {
  auto all = db.prepare(kAllSeries);
  if (!all) return fail(all.error());
  auto user = db.prepare(kUserSeries);
  if (!user) return fail(user.error());
  auto state = std::make_unique<State>(db, std::move(*all), std::move(*user));
  if (auto first = state->statement(0); !first) return fail(first.error());
  return SampleQuery(std::move(state));
}

Result<void> SampleQuery::start_by_series(const SampleFilter& filter) {
  State& s = *state_;
  s.reset_all();
  s.since_ms = filter.since_ms.value_or(kMinMs);
  s.until_ms = filter.until_ms.value_or(kMaxMs);
  bind_optional(s.all_series, 1, filter.user_id);
  bind_optional(s.all_series, 2, filter.resource);
  bind_optional(s.all_series, 3, filter.provider);
  bind_optional(s.all_series, 4, filter.source_type);
  s.mode = State::Mode::by_series;
  return {};
}

Result<void> SampleQuery::start_by_time(const SampleFilter& filter, std::optional<SamplePosition> after) {
  State& s = *state_;
  s.reset_all();
  if (!filter.user_id || !filter.resource) return fail("a time-ordered sample query needs a user and a resource");
  s.since_ms = filter.since_ms.value_or(kMinMs);
  s.until_ms = filter.until_ms.value_or(kMaxMs);
  s.user_series.bind(1, std::string_view(*filter.user_id)).bind(2, std::string_view(*filter.resource));
  bind_optional(s.user_series, 3, filter.provider);
  bind_optional(s.user_series, 4, filter.source_type);
  for (;;) {
    auto has_series = s.user_series.step();
    if (!has_series) return fail(has_series.error());
    if (!*has_series) break;
    if (s.heads.size() == kMaxMergedSeries) {
      s.user_series.reset();
      return fail("more than " + std::to_string(kMaxMergedSeries) + " series match; narrow the query");
    }
    State::Head head;
    head.series_id = s.user_series.column_int(0);
    head.user_id = s.user_series.column_text(1);
    head.resource = s.user_series.column_text(2);
    head.provider = s.user_series.column_text(3);
    head.source_type = s.user_series.column_text(4);
    const SeriesIdentity identity = read_identity(s.user_series);
    head.source_id = identity.source_id;
    head.source_id_text = copy(identity.source_id_text);
    head.client_user_id = copy(identity.client_user_id);
    head.provider_name = copy(identity.provider_name);
    head.statement = s.heads.size();
    s.heads.push_back(std::move(head));
  }
  s.user_series.reset();
  for (auto& head : s.heads) {
    auto statement = s.statement(head.statement);
    if (!statement) return fail(statement.error());
    // After (t, id) in (t_ms, series_id) order: a series with a higher id may still have
    // a sample at t itself, a lower or equal one only after t.
    int64_t from = s.since_ms;
    if (after) {
      const int64_t resume = head.series_id > after->series_id ? after->t_ms
                             : after->t_ms == kMaxMs          ? kMaxMs
                                                              : after->t_ms + 1;
      from = std::max(from, resume);
    }
    (*statement)->bind(1, head.series_id).bind(2, from).bind(3, s.until_ms);
    auto has_row = (*statement)->step();
    if (!has_row) return fail(has_row.error());
    head.has_row = *has_row;
  }
  s.mode = State::Mode::by_time;
  return {};
}

void SampleQuery::finish() {
  state_->reset_all();
  state_->mode = State::Mode::idle;
}

Result<bool> SampleQuery::next(StoredSample& row) {
  switch (state_->mode) {
    case State::Mode::idle: return false;
    case State::Mode::by_series: return state_->next_by_series(row);
    case State::Mode::by_time: return state_->next_by_time(row);
  }
  return false;
}

}  // namespace hh::store
