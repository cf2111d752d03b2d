#pragma once
// A strict reader of the Prometheus text format 0.0.4 for tests: it throws
// std::runtime_error("line N: …") on anything a Prometheus server would reject or that our
// exposition promises not to do:
//  - a line that is neither "# HELP", "# TYPE", another comment, blank, nor a sample;
//  - a sample before its family's TYPE, or of another family than the last TYPE;
//  - a family declared twice; a TYPE other than counter, gauge, histogram;
//  - bad metric or label names, bad escapes, unterminated label values, bad values;
//  - a histogram whose buckets are not cumulative, lack le="+Inf", or whose +Inf bucket
//    differs from its _count; a counter below zero or without the _total suffix.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hh::test {

struct PromSample {
  std::string name;  // as written: x, x_total, x_bucket, x_sum, x_count
  std::map<std::string, std::string> labels;  // values unescaped
  double value = 0;
};

struct PromFamily {
  std::string type;
  std::string help;  // unescaped
  std::vector<PromSample> samples;
};

class PromExposition {
 public:
  static PromExposition parse(const std::string& text);

  const std::map<std::string, PromFamily>& families() const { return families_; }
  bool has(const std::string& family) const { return families_.count(family) > 0; }
  const PromFamily& family(const std::string& name) const;
  // The value of the sample `name` whose labels are exactly `labels`; nullopt if absent.
  std::optional<double> value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;

 private:
  std::map<std::string, PromFamily> families_;
};

}  // namespace hh::test
