#pragma once
// The table of every setting (private to config/): its name, type, range and meaning, how
// to set it from TOML and from text (environment, flags), and how to show its value.
// load_settings.cpp reads and checks through it, and `healthhook config reference` prints
// it (settings_reference.h), so the documented keys, defaults and ranges are the ones the
// code uses.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

#include "common/result.h"
#include "config/settings.h"

namespace hh::config {

struct IntegerRange {
  int64_t lo;
  int64_t hi;
};

// What a reader of the reference needs to know about one key.
struct KeyDoc {
  std::string name;                  // the TOML key, dotted ("service.base_url")
  std::string type;                  // "string", "integer", "true/false", …
  std::string allowed;               // in words, for what is not an integer range ("full or normal")
  std::string meaning;               // one or two sentences
  std::optional<IntegerRange> range; // integers: validate() refuses a value outside
  bool file_only = false;            // a list or table: only in the configuration file
};

struct SettingKey {
  KeyDoc doc;
  std::function<Result<void>(Settings&, const toml::node&)> from_toml;
  std::function<Result<void>(Settings&, std::string_view)> from_string;
  std::function<std::string(const Settings&)> show;      // the value as TOML
  std::function<int64_t(const Settings&)> integer_value;  // integer keys only
};

// Every top-level key, in the order of the reference. [[forward]] keys: forward_settings.h.
const std::vector<SettingKey>& setting_keys();
const SettingKey* find_setting_key(std::string_view name);

// "KEY: what": every settings error names its key first.
Error key_error(std::string_view key, std::string_view what);

// `value` against the key's range: "NAME: must be between LO and HI, got V" when outside
// (`name` as the message should say it, e.g. "forward[0].batch"). Keys without a range pass.
Result<void> check_range(const KeyDoc& doc, int64_t value, std::string_view name);

// TOML spelling of a string value ("…" with \" and \\ escaped).
std::string toml_string(std::string_view text);
// … and of a list of them: ["a", "b"].
std::string toml_string_list(const std::vector<std::string>& texts);

// "3d" for 259200 seconds, else "12h", "30m", or seconds: how max_age reads best.
std::string duration_text(int64_t seconds);

}  // namespace hh::config
