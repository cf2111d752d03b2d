#pragma once
// Reads settings from the TOML file, the environment and flags (see settings.h).
// Errors are one line naming the key, e.g. "max_body_bytes: expected an integer, got \"x\"".
#include <map>
#include <optional>
#include <string>

#include "common/result.h"
#include "config/settings.h"

namespace hh::config {

// Flag values given on the command line, by TOML key ("listen", "service.base_url").
using Overrides = std::map<std::string, std::string>;

// `environ_lookup` returns the value of an environment variable or nullptr
// (tests pass their own; production passes getenv).
using EnvLookup = const char* (*)(const char*);

// What the configuration file may be: any file at start-up (`--config <(envsubst < tpl)`, a
// pipe, is read as a file is), a regular file only when serve reads it again on SIGHUP: a
// FIFO there would hold the reload (and a stop behind it) until something writes to it.
enum class ConfigFileKind { any, regular_only };

Result<Settings> load_settings(const std::optional<std::string>& config_file, EnvLookup environ_lookup,
                               const Overrides& flags, ConfigFileKind file_kind = ConfigFileKind::any);

// The line of each key a TOML document set, by dotted name.
using KeyLines = std::map<std::string, int64_t>;

// Applies the keys of one TOML document to `settings` (no environment, no validation).
// `source_name` and the line prefix errors ("healthhook.toml:3:7: …" for TOML syntax,
// "healthhook.toml:3: max_body_bytes: …" for a key); `lines`, when given, gets each key's line.
Result<void> apply_toml_text(Settings& settings, std::string_view text, const std::string& source_name,
                             KeyLines* lines = nullptr);

// Checks ranges and combinations after loading ("threads: must be between 0 and 256").
Result<void> validate(const Settings& settings);

// A header name the API key may be sent in (letters, digits, '-' and '_').
bool is_header_name(std::string_view name);
// Host, the framing and hop-by-hop headers, and the ones every request to the service
// already carries (Accept, Accept-Encoding, User-Agent, …), any case: not for the API key.
bool is_reserved_request_header(std::string_view name);

// `message` about `key`, prefixed with where the key was set, as a load error would be
// ("healthhook.toml:7: processing_sessions: …", "HEALTHHOOK_PROCESSING_SESSIONS (…)").
std::string located(const Settings& settings, const std::string& key, std::string message);

// All known keys, for --help and error messages.
const std::vector<std::string>& known_keys();

}  // namespace hh::config
