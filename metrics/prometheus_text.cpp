#include "metrics/prometheus_text.h"

#include <charconv>
#include <cmath>

namespace hh::metrics {
namespace {

template <typename Integer>
void append_integer(std::string& out, Integer value) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  (void)ec;
  out.append(buf, end);
}

}  // namespace

void append_help_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c == '\\') out.append("\\\\");
    else if (c == '\n') out.append("\\n");
    else out.push_back(c);
  }
}

void append_label_value_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c == '\\') out.append("\\\\");
    else if (c == '"') out.append("\\\"");
    else if (c == '\n') out.append("\\n");
    else out.push_back(c);
  }
}

void append_sample_value(std::string& out, double value) {
  if (std::isnan(value)) {
    out.append("NaN");
  } else if (std::isinf(value)) {
    out.append(value > 0 ? "+Inf" : "-Inf");
  } else {
    // Shortest round-trip digits; plain notation in the usual range, so that bucket bounds
    // read le="0.0005" (what queries and other exporters write), not le="5e-04".
    const double magnitude = std::fabs(value);
    const auto format =
        value == 0 || (magnitude >= 1e-6 && magnitude < 1e15) ? std::chars_format::fixed : std::chars_format::general;
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, format);
    (void)ec;
    out.append(buf, end);
  }
}

PrometheusText& PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
  text_.append("# HELP ").append(name).push_back(' ');
  append_help_escaped(text_, help);
  text_.append("\n# TYPE ").append(name).push_back(' ');
  text_.append(type).push_back('\n');
  return *this;
}

void PrometheusText::labels(std::span<const Label> labels, std::string_view extra_name, std::string_view extra_value) {
  if (labels.empty() && extra_name.empty()) return;
  text_.push_back('{');
  bool first = true;
  auto one = [&](std::string_view name, std::string_view value) {
    if (!first) text_.push_back(',');
    first = false;
    text_.append(name).append("=\"");
    append_label_value_escaped(text_, value);
    text_.push_back('"');
  };
  for (const auto& [name, value] : labels) one(name, value);
  if (!extra_name.empty()) one(extra_name, extra_value);
  text_.push_back('}');
}

PrometheusText& PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, double value) {
  return sample_labelled(name, std::span<const Label>(labels.begin(), labels.size()), value);
}

PrometheusText& PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, uint64_t value) {
  text_.append(name);
  this->labels(std::span<const Label>(labels.begin(), labels.size()));
  text_.push_back(' ');
  append_integer(text_, value);
  text_.push_back('\n');
  return *this;
}

PrometheusText& PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, int64_t value) {
  text_.append(name);
  this->labels(std::span<const Label>(labels.begin(), labels.size()));
  text_.push_back(' ');
  append_integer(text_, value);
  text_.push_back('\n');
  return *this;
}

PrometheusText& PrometheusText::sample_labelled(std::string_view name, std::span<const Label> labels, double value) {
  text_.append(name);
  this->labels(labels);
  text_.push_back(' ');
  append_sample_value(text_, value);
  text_.push_back('\n');
  return *this;
}

PrometheusText& PrometheusText::histogram(std::string_view name, std::string_view help,
                                          const HistogramSnapshot& snapshot) {
  family(name, "histogram", help);
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  std::string le;
  for (size_t i = 0; i < snapshot.counts.size(); ++i) {
    cumulative += snapshot.counts[i];
    le.clear();
    if (i < snapshot.upper_bounds.size()) append_sample_value(le, snapshot.upper_bounds[i]);
    else le = "+Inf";
    text_.append(bucket);
    labels({}, "le", le);
    text_.push_back(' ');
    append_integer(text_, cumulative);
    text_.push_back('\n');
  }
  text_.append(name).append("_sum ");
  append_sample_value(text_, snapshot.sum);
  text_.append("\n").append(name).append("_count ");
  append_integer(text_, cumulative);  // equals the +Inf bucket by construction
  text_.push_back('\n');
  return *this;
}

}  // namespace hh::metrics
