#pragma once
// Job payloads (store/jobs/claimed_job.h) edited as SQLite's json_set and json_remove edit
// them, so a PostgreSQL store shows the same payload text as a SQLite one. The payload is
// text (kept as written, not jsonb, which would reorder and respace it); SQLite's JSON
// functions return their result minified, members in order, strings and numbers as written.
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace hh::store {

// json_set(payload, '$.k1', v1, '$.k2', v2, …) for top-level keys: the first member of
// each key gets the new value (JSON text), keys not there are appended in order. Fails
// when the payload is not a JSON object (SQLite fails on malformed JSON too).
Result<std::string> json_set_members(std::string_view payload,
                                     std::span<const std::pair<std::string_view, std::string>> values);

// json_remove(payload, '$.k1', …) for top-level keys. Fails when the payload is not a JSON
// object (callers check first, as SQLite's callers check json_valid).
Result<std::string> json_remove_members(std::string_view payload, std::span<const std::string_view> keys);

}  // namespace hh::store
