#pragma once
// [[forward]] blocks (spec §10, config/settings.h ForwardSettings): read from the TOML
// file (a list of tables has no form as one environment variable) and checked.
#include <string_view>
#include <toml++/toml.h>
#include <vector>

#include "common/result.h"
#include "config/setting_keys.h"
#include "config/settings.h"

namespace hh::config {

// The blocks of a `forward` array of tables; an error names "forward[i].key".
Result<std::vector<ForwardSettings>> parse_forward_blocks(const toml::node& node);

// Required keys, ranges, names unique, URLs: https, or http to a loopback host, or http
// anywhere with allow_plain_http.
Result<void> validate_forwards(const std::vector<ForwardSettings>& forwards);

// One key of a [[forward]] block, for the reference and the range checks ("forward[].batch").
struct ForwardKey {
  KeyDoc doc;
  std::function<std::string(const ForwardSettings&)> show;   // the value as TOML
  std::function<int64_t(const ForwardSettings&)> integer_value;  // integer keys only
};
const std::vector<ForwardKey>& forward_keys();
const ForwardKey* find_forward_key(std::string_view key);  // "batch"
std::string_view block_key(const ForwardKey& key);         // its name inside a block: "batch"

// "3d", "12h", "30m", "45s" (or a bare number of seconds) → seconds.
Result<int64_t> parse_duration_s(std::string_view text);

}  // namespace hh::config
