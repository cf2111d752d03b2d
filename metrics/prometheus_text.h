#pragma once
// Writes the Prometheus text exposition format, version 0.0.4:
//
//   exposition = { family }
//   family     = "# HELP " name " " help-text "\n"
//                "# TYPE " name " " ("counter" | "gauge" | "histogram") "\n"
//                { sample }
//   sample     = name [ "{" label "=" '"' label-value '"' { "," label "=" '"' label-value '"' } "}" ] " " value "\n"
//   value      = integer | float | "+Inf" | "-Inf" | "NaN"
//
// help-text escapes '\' and newline; label values escape '\', '"' and newline. A
// histogram family `x` is written as x_bucket{le="…"} (cumulative, ending with
// le="+Inf"), x_sum and x_count.
//
// Contract for callers: every sample of a family follows its HELP/TYPE lines, and a family
// name is written once per exposition (Prometheus rejects a repeated family). Names must
// match [a-zA-Z_:][a-zA-Z0-9_:]*; they are compile-time constants in our code, so this
// writer does not check them.
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hh::metrics {

// The Content-Type of a text exposition.
inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

using Label = std::pair<std::string_view, std::string_view>;

// A point-in-time copy of a histogram: per-bucket (not cumulative) counts, one per upper
// bound, plus the overflow bucket (+Inf) last; `sum` of all observations.
struct HistogramSnapshot {
  std::span<const double> upper_bounds;
  std::vector<uint64_t> counts;  // upper_bounds.size() + 1 entries
  double sum = 0;
};

class PrometheusText {
 public:
  // Starts a family. `type`: "counter", "gauge" or "histogram".
  PrometheusText& family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the current family (`name` may carry a suffix, e.g. for histograms).
  PrometheusText& sample(std::string_view name, std::initializer_list<Label> labels, double value);
  PrometheusText& sample(std::string_view name, std::initializer_list<Label> labels, uint64_t value);
  PrometheusText& sample(std::string_view name, std::initializer_list<Label> labels, int64_t value);
  // Labels built at run time (e.g. one series per row of a query).
  PrometheusText& sample_labelled(std::string_view name, std::span<const Label> labels, double value);

  // A whole histogram family with one unlabelled series.
  PrometheusText& histogram(std::string_view name, std::string_view help, const HistogramSnapshot& snapshot);

  // A one-sample family, the common case.
  PrometheusText& counter(std::string_view name, std::string_view help, uint64_t value) {
    return family(name, "counter", help).sample(name, {}, value);
  }
  PrometheusText& gauge(std::string_view name, std::string_view help, double value) {
    return family(name, "gauge", help).sample(name, {}, value);
  }
  PrometheusText& gauge(std::string_view name, std::string_view help, int64_t value) {
    return family(name, "gauge", help).sample(name, {}, value);
  }

  const std::string& text() const { return text_; }
  std::string take() { return std::move(text_); }

 private:
  void labels(std::span<const Label> labels, std::string_view extra_name = {}, std::string_view extra_value = {});
  std::string text_;
};

// Escaping rules of the format (exposed for tests).
void append_help_escaped(std::string& out, std::string_view text);
void append_label_value_escaped(std::string& out, std::string_view text);
// Shortest text that reads back as the same double; "+Inf", "-Inf", "NaN".
void append_sample_value(std::string& out, double value);

// A counter's value for a scrape. Relaxed: each counter is read once per scrape, and no
// figure relies on two counters agreeing with each other.
inline uint64_t read_counter(const std::atomic<uint64_t>& counter) {
  return counter.load(std::memory_order_relaxed);
}

}  // namespace hh::metrics
