// The backend-neutral parts of the read queries (store/read_query_common.h).
#include "store/read_query_common.h"

#include <algorithm>
#include <limits>

#include "common/glob_problem.h"
#include "store/read_rows.h"
#include "store/schema/glob_regex.h"

namespace hh::store {

std::string too_many_series_error() {
  return "more than " + std::to_string(kMaxMergedSeries) + " series match; narrow the query";
}

std::string not_a_summary_key_error(std::string_view key) { return "not a summary key: " + std::string(key); }

std::string not_a_record_key_error(std::string_view key) { return "not a key of this table: " + std::string(key); }

std::optional<KeyParts> split_change_key(std::string_view key, size_t parts) {
  KeyParts out{};
  size_t start = 0;
  for (size_t part = 0; part < parts; ++part) {
    const bool last = part + 1 == parts;
    const size_t slash = last ? std::string_view::npos : key.find('/', start);
    if (slash == std::string_view::npos && !last) return std::nullopt;
    out[part] = key.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    start = slash + 1;
  }
  return out;
}

int64_t sample_resume_ms(int64_t series_id, int64_t since_ms, const std::optional<SamplePosition>& after) {
  if (!after) return since_ms;
  constexpr int64_t kLatest = std::numeric_limits<int64_t>::max();
  const int64_t resume = series_id > after->series_id ? after->t_ms
                         : after->t_ms == kLatest     ? kLatest
                                                      : after->t_ms + 1;
  return std::max(since_ms, resume);
}

void SeriesHead::name(StoredSample& row) const {
  const auto view = [](const std::optional<std::string>& text) {
    return text ? std::optional<std::string_view>(*text) : std::nullopt;
  };
  row.series_id = series_id;
  row.user_id = user_id;
  row.resource = resource;
  row.provider = provider;
  row.source_type = source_type;
  row.source_id = source_id;
  row.source_id_text = view(source_id_text);
  row.client_user_id = view(client_user_id);
  row.provider_name = view(provider_name);
}

ChangePageEnd change_page_end(int64_t after_seq, std::optional<int64_t> first_seq,
                              std::optional<int64_t> seq_past_limit) {
  if (!first_seq) return {after_seq, false};  // nothing to read
  if (!seq_past_limit) return {kAfterWholeSeq, false};  // everything fits
  // The seq at the cut would be cut in two: leave it for the next page, unless it is the
  // page's first seq (then the page ends inside it, after exactly `limit`).
  const bool inside = *seq_past_limit == *first_seq;
  return {inside ? *seq_past_limit : *seq_past_limit - 1, inside};
}

std::string event_type_glob_problem(std::string_view glob) { return glob_problem(glob); }

}  // namespace hh::store
