#include "store/postgres/jobs/payload_json.h"

#include <vector>

#include "common/json_minify.h"
#include "common/json_scan.h"
#include "common/json_writer.h"

namespace hh::store {
namespace {

// One walk for both: each member is kept, given a new value, or left out.
Result<std::string> edit_members(std::string_view payload,
                                 std::span<const std::pair<std::string_view, std::string>> values,
                                 std::span<const std::string_view> removed) {
  json::Scanner s(payload);
  std::vector<bool> done(values.size(), false), gone(removed.size(), false);
  std::string out = "{";
  bool first = true;
  s.skip_space();
  if (!s.skip('{')) return fail("payload is not a JSON object");
  s.skip_space();
  if (!s.skip('}')) {
    for (;;) {
      s.skip_space();
      const size_t key_start = s.offset();
      std::string_view key;
      if (!s.string(&key)) return fail("payload is not valid JSON");
      const std::string_view key_raw = payload.substr(key_start, s.offset() - key_start);
      s.skip_space();
      if (!s.skip(':')) return fail("payload is not valid JSON");
      s.skip_space();
      const size_t value_start = s.offset();
      if (!s.value(json::kSimdjsonMaxDepth - 1)) return fail("payload is not valid JSON");
      bool dropped = false;
      for (size_t i = 0; i < removed.size() && !dropped; ++i) {
        if (!gone[i] && removed[i] == key) gone[i] = dropped = true;
      }
      if (dropped) {
        s.skip_space();
        if (s.skip(',')) continue;
        if (s.skip('}')) break;
        return fail("payload is not valid JSON");
      }
      if (!first) out += ',';
      first = false;
      out += key_raw;
      out += ':';
      bool replaced = false;
      for (size_t i = 0; i < values.size() && !replaced; ++i) {
        if (!done[i] && values[i].first == key) {
          out += values[i].second;
          done[i] = replaced = true;
        }
      }
      if (!replaced) json::append_minified(out, payload.substr(value_start, s.offset() - value_start));
      s.skip_space();
      if (s.skip(',')) continue;
      if (s.skip('}')) break;
      return fail("payload is not valid JSON");
    }
  }
  s.skip_space();
  if (!s.at_end()) return fail("payload is not valid JSON");
  for (size_t i = 0; i < values.size(); ++i) {
    if (done[i]) continue;
    if (!first) out += ',';
    first = false;
    json::append_string(out, values[i].first);
    out += ':';
    out += values[i].second;
  }
  return out + "}";
}

}  // namespace

Result<std::string> json_set_members(std::string_view payload,
                                     std::span<const std::pair<std::string_view, std::string>> values) {
  return edit_members(payload, values, {});
}

Result<std::string> json_remove_members(std::string_view payload, std::span<const std::string_view> keys) {
  return edit_members(payload, {}, keys);
}

}  // namespace hh::store
