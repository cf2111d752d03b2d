#include "tests/ops/prometheus_parser.h"

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>

namespace hh::test {
namespace {

[[noreturn]] void reject(size_t line, const std::string& why) {
  throw std::runtime_error("line " + std::to_string(line) + ": " + why);
}

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

bool valid_metric_name(const std::string& name) {
  if (name.empty() || !name_start(name[0])) return false;
  for (char c : name) {
    if (!name_char(c)) return false;
  }
  return true;
}

bool valid_label_name(const std::string& name) {
  return valid_metric_name(name) && name.find(':') == std::string::npos && !name.starts_with("__");
}

double parse_value(size_t line, const std::string& text) {
  if (text == "+Inf") return HUGE_VAL;
  if (text == "-Inf") return -HUGE_VAL;
  if (text == "NaN") return NAN;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isinf(value) || std::isnan(value)) {
    reject(line, "bad sample value \"" + text + "\"");
  }
  return value;
}

std::string unescape_help(size_t line, const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out.push_back(text[i]);
      continue;
    }
    if (++i == text.size()) reject(line, "dangling backslash in HELP");
    if (text[i] == '\\') out.push_back('\\');
    else if (text[i] == 'n') out.push_back('\n');
    else reject(line, std::string("bad escape \\") + text[i] + " in HELP");
  }
  return out;
}

// Parses `{a="x",b="y"}` starting at text[pos] == '{'; leaves pos after '}'.
std::map<std::string, std::string> parse_labels(size_t line, const std::string& text, size_t& pos) {
  std::map<std::string, std::string> labels;
  ++pos;  // '{'
  while (pos < text.size() && text[pos] != '}') {
    const size_t name_begin = pos;
    while (pos < text.size() && name_char(text[pos])) ++pos;
    const std::string name = text.substr(name_begin, pos - name_begin);
    if (!valid_label_name(name)) reject(line, "bad label name \"" + name + "\"");
    if (pos + 1 >= text.size() || text[pos] != '=' || text[pos + 1] != '"') reject(line, "expected =\" after label");
    pos += 2;
    std::string value;
    for (;;) {
      if (pos >= text.size()) reject(line, "unterminated label value");
      const char c = text[pos++];
      if (c == '"') break;
      if (c == '\n') reject(line, "raw newline in label value");
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (pos >= text.size()) reject(line, "dangling backslash in label value");
      const char e = text[pos++];
      if (e == '\\') value.push_back('\\');
      else if (e == '"') value.push_back('"');
      else if (e == 'n') value.push_back('\n');
      else reject(line, std::string("bad escape \\") + e + " in label value");
    }
    if (!labels.emplace(name, value).second) reject(line, "label \"" + name + "\" repeated");
    if (pos < text.size() && text[pos] == ',') ++pos;
    else if (pos < text.size() && text[pos] != '}') reject(line, "expected , or } after label value");
  }
  if (pos >= text.size()) reject(line, "unterminated label set");
  ++pos;  // '}'
  return labels;
}

bool belongs_to(const std::string& sample, const std::string& family, const std::string& type) {
  if (type == "histogram") {
    return sample == family + "_bucket" || sample == family + "_sum" || sample == family + "_count";
  }
  return sample == family;
}

void check_histogram(const std::string& name, const PromFamily& family) {
  // Group buckets by their labels without `le` (one series per label set).
  std::map<std::map<std::string, std::string>, std::vector<std::pair<double, double>>> buckets;
  std::map<std::map<std::string, std::string>, double> counts;
  for (const auto& sample : family.samples) {
    auto labels = sample.labels;
    if (sample.name == name + "_bucket") {
      auto le = labels.find("le");
      if (le == labels.end()) throw std::runtime_error(name + ": bucket without le");
      const double bound = le->second == "+Inf" ? HUGE_VAL : std::strtod(le->second.c_str(), nullptr);
      labels.erase(le);
      buckets[labels].push_back({bound, sample.value});
    } else if (sample.name == name + "_count") {
      counts[labels] = sample.value;
    }
  }
  if (buckets.empty()) throw std::runtime_error(name + ": histogram without buckets");
  for (const auto& [labels, series] : buckets) {
    double previous_bound = -HUGE_VAL, previous_count = 0;
    for (const auto& [bound, count] : series) {
      if (bound <= previous_bound) throw std::runtime_error(name + ": bucket bounds not increasing");
      if (count < previous_count) throw std::runtime_error(name + ": bucket counts not cumulative");
      previous_bound = bound;
      previous_count = count;
    }
    if (!std::isinf(series.back().first)) throw std::runtime_error(name + ": no le=\"+Inf\" bucket");
    auto count = counts.find(labels);
    if (count == counts.end()) throw std::runtime_error(name + ": no _count");
    if (count->second != series.back().second) throw std::runtime_error(name + ": +Inf bucket != _count");
  }
}

}  // namespace

PromExposition PromExposition::parse(const std::string& text) {
  PromExposition out;
  std::set<std::string> helped;
  std::string current;  // family of the last TYPE line
  std::istringstream lines(text);
  std::string l;
  size_t n = 0;
  if (!text.empty() && text.back() != '\n') reject(1, "exposition does not end with a newline");
  while (std::getline(lines, l)) {
    ++n;
    if (l.empty()) continue;
    if (l.starts_with("# HELP ") || l.starts_with("# TYPE ")) {
      const std::string rest = l.substr(7);
      const size_t space = rest.find(' ');
      if (space == std::string::npos) reject(n, "HELP/TYPE without text");
      const std::string name = rest.substr(0, space);
      if (!valid_metric_name(name)) reject(n, "bad metric name \"" + name + "\"");
      const std::string value = rest.substr(space + 1);
      if (l[2] == 'H') {
        if (!helped.insert(name).second) reject(n, "second HELP for " + name);
        out.families_[name].help = unescape_help(n, value);
      } else {
        if (value != "counter" && value != "gauge" && value != "histogram") reject(n, "unknown TYPE " + value);
        PromFamily& family = out.families_[name];
        if (!family.type.empty()) reject(n, "family " + name + " declared twice");
        if (!family.samples.empty()) reject(n, "TYPE after samples of " + name);
        family.type = value;
        current = name;
      }
      continue;
    }
    if (l[0] == '#') continue;  // other comments are allowed

    size_t pos = 0;
    while (pos < l.size() && name_char(l[pos])) ++pos;
    PromSample sample;
    sample.name = l.substr(0, pos);
    if (!valid_metric_name(sample.name)) reject(n, "bad sample name in \"" + l + "\"");
    if (pos < l.size() && l[pos] == '{') sample.labels = parse_labels(n, l, pos);
    if (pos >= l.size() || l[pos] != ' ') reject(n, "expected a space before the value");
    const std::string rest = l.substr(pos + 1);
    if (rest.find(' ') != std::string::npos) reject(n, "timestamps are not expected: \"" + l + "\"");
    sample.value = parse_value(n, rest);
    if (current.empty()) reject(n, "sample " + sample.name + " before any TYPE");
    PromFamily& family = out.families_[current];
    if (!belongs_to(sample.name, current, family.type)) {
      reject(n, "sample " + sample.name + " is not of the current family " + current);
    }
    if (family.type == "counter") {
      if (!current.ends_with("_total")) reject(n, "counter " + current + " without _total");
      if (sample.value < 0) reject(n, "negative counter");
    }
    for (const auto& earlier : family.samples) {
      if (earlier.name == sample.name && earlier.labels == sample.labels) reject(n, "series repeated: " + l);
    }
    family.samples.push_back(std::move(sample));
  }
  for (const auto& [name, family] : out.families_) {
    if (family.type.empty()) throw std::runtime_error(name + ": HELP without TYPE");
    if (family.type == "histogram") check_histogram(name, family);
  }
  return out;
}

const PromFamily& PromExposition::family(const std::string& name) const {
  auto it = families_.find(name);
  if (it == families_.end()) throw std::runtime_error("no family " + name);
  return it->second;
}

std::optional<double> PromExposition::value(const std::string& name,
                                            const std::map<std::string, std::string>& labels) const {
  for (const auto& [family_name, family] : families_) {
    for (const auto& sample : family.samples) {
      if (sample.name == name && sample.labels == labels) return sample.value;
    }
  }
  return std::nullopt;
}

}  // namespace hh::test
