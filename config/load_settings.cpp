#include "config/load_settings.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <toml++/toml.h>

#include "common/http_url.h"
#include "config/forward_settings.h"

namespace hh::config {
namespace {

// One settable key: how to set it from TOML and from a string (environment, flags).
struct Key {
  std::string name;
  std::function<Result<void>(Settings&, const toml::node&)> from_toml;
  std::function<Result<void>(Settings&, std::string_view)> from_string;
};

Error key_error(std::string_view key, std::string_view what) {
  return fail(std::string(key) + ": " + std::string(what));
}

std::string quote_value(std::string_view text) { return "\"" + std::string(text) + "\""; }

Key string_key(std::string name, std::string Settings::*member) {
  return {name,
          [name, member](Settings& s, const toml::node& node) -> Result<void> {
            const auto* value = node.as_string();
            if (!value) return key_error(name, "expected a string");
            s.*member = value->get();
            return {};
          },
          [member](Settings& s, std::string_view text) -> Result<void> {
            s.*member = std::string(text);
            return {};
          }};
}

template <typename Section>
Key section_string_key(std::string name, Section Settings::*section, std::string Section::*member) {
  return {name,
          [name, section, member](Settings& s, const toml::node& node) -> Result<void> {
            const auto* value = node.as_string();
            if (!value) return key_error(name, "expected a string");
            s.*section.*member = value->get();
            return {};
          },
          [section, member](Settings& s, std::string_view text) -> Result<void> {
            s.*section.*member = std::string(text);
            return {};
          }};
}

Result<int64_t> parse_integer(std::string_view key, std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    return key_error(key, "expected an integer, got " + quote_value(text));
  }
  return value;
}

template <typename Target>
Key integer_key(std::string name, Target target) {
  return {name,
          [name, target](Settings& s, const toml::node& node) -> Result<void> {
            const auto* value = node.as_integer();
            if (!value) return key_error(name, "expected an integer");
            target(s) = value->get();
            return {};
          },
          [name, target](Settings& s, std::string_view text) -> Result<void> {
            auto value = parse_integer(name, text);
            if (!value) return fail(value.error());
            target(s) = *value;
            return {};
          }};
}

// true / false in TOML; "true" / "false" from the environment or a flag.
template <typename Target>
Key bool_key(std::string name, Target target) {
  return {name,
          [name, target](Settings& s, const toml::node& node) -> Result<void> {
            const auto* value = node.as_boolean();
            if (!value) return key_error(name, "expected true or false");
            target(s) = value->get();
            return {};
          },
          [name, target](Settings& s, std::string_view text) -> Result<void> {
            if (text != "true" && text != "false") return key_error(name, "expected true or false, got " + quote_value(text));
            target(s) = text == "true";
            return {};
          }};
}

Key top_integer(std::string name, int64_t Settings::*member) {
  return integer_key(name, [member](Settings& s) -> int64_t& { return s.*member; });
}

Key service_integer(std::string name, int64_t ServiceSettings::*member) {
  return integer_key(name, [member](Settings& s) -> int64_t& { return s.service.*member; });
}

// [[service.teams]]: an array of tables {team_id, base_url, api_key_file}, all three
// required. Only from the configuration file: a list of tables has no sensible form as one
// environment variable or flag.
Key teams_key() {
  const std::string name = "service.teams";
  return {name,
          [name](Settings& s, const toml::node& node) -> Result<void> {
            const auto* array = node.as_array();
            if (!array) return key_error(name, "expected [[service.teams]] tables");
            std::vector<TeamSettings> teams;
            for (size_t i = 0; i < array->size(); ++i) {
              const std::string where = name + "[" + std::to_string(i) + "]";
              const auto* table = (*array)[i].as_table();
              if (!table) return key_error(where, "expected a table with team_id, base_url and api_key_file");
              TeamSettings team;
              for (const auto& [key, value] : *table) {
                std::string* field = key == "team_id"        ? &team.team_id
                                     : key == "base_url"     ? &team.base_url
                                     : key == "api_key_file" ? &team.api_key_file
                                                             : nullptr;
                const std::string member = where + "." + std::string(key.str());
                if (!field) return key_error(member, "unknown key");
                const auto* text = value.as_string();
                if (!text) return key_error(member, "expected a string");
                *field = text->get();
              }
              teams.push_back(std::move(team));
            }
            s.service.teams = std::move(teams);
            return {};
          },
          [name](Settings&, std::string_view) -> Result<void> {
            return key_error(name, "can only be set in the configuration file ([[service.teams]])");
          }};
}

// [management.base_urls]: a table of region = "base URL". From the environment or a flag:
// "us=https://…,eu=https://…".
Key management_base_urls_key() {
  const std::string name = "management.base_urls";
  return {name,
          [name](Settings& s, const toml::node& node) -> Result<void> {
            const auto* table = node.as_table();
            if (!table) return key_error(name, "expected a table of region = \"base URL\"");
            std::vector<std::pair<std::string, std::string>> urls;
            for (const auto& [region, value] : *table) {
              const auto* url = value.as_string();
              if (!url) return key_error(name + "." + std::string(region.str()), "expected a string");
              urls.emplace_back(std::string(region.str()), url->get());
            }
            s.management.base_urls = std::move(urls);
            return {};
          },
          [name](Settings& s, std::string_view text) -> Result<void> {
            std::vector<std::pair<std::string, std::string>> urls;
            size_t start = 0;
            while (start < text.size()) {
              const size_t comma = std::min(text.find(',', start), text.size());
              const std::string_view entry = text.substr(start, comma - start);
              const size_t eq = entry.find('=');
              if (eq == std::string_view::npos || eq == 0) {
                return key_error(name, "expected REGION=URL[,REGION=URL…], got " + quote_value(entry));
              }
              urls.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
              start = comma + 1;
            }
            s.management.base_urls = std::move(urls);
            return {};
          }};
}

// [[forward]] blocks (config/forward_settings.h), from the configuration file only.
Key forward_key() {
  const std::string name = "forward";
  return {name,
          [](Settings& s, const toml::node& node) -> Result<void> {
            auto forwards = parse_forward_blocks(node);
            if (!forwards) return fail(forwards.error());
            s.forwards = std::move(*forwards);
            return {};
          },
          [name](Settings&, std::string_view) -> Result<void> {
            return key_error(name, "can only be set in the configuration file ([[forward]])");
          }};
}

// signing_secret_files: a TOML array of strings; from the environment or a flag, a
// comma-separated list.
Key secret_files_key() {
  const std::string name = "signing_secret_files";
  return {name,
          [name](Settings& s, const toml::node& node) -> Result<void> {
            const auto* array = node.as_array();
            if (!array) return key_error(name, "expected an array of file names");
            std::vector<std::string> files;
            for (const auto& item : *array) {
              const auto* file = item.as_string();
              if (!file) return key_error(name, "expected an array of file names");
              files.push_back(file->get());
            }
            s.signing_secret_files = std::move(files);
            return {};
          },
          [](Settings& s, std::string_view text) -> Result<void> {
            std::vector<std::string> files;
            size_t start = 0;
            while (start <= text.size()) {
              const size_t comma = std::min(text.find(',', start), text.size());
              if (comma > start) files.emplace_back(text.substr(start, comma - start));
              start = comma + 1;
            }
            s.signing_secret_files = std::move(files);
            return {};
          }};
}

std::vector<Key> make_keys() {
  return {
      string_key("listen", &Settings::listen),
      string_key("database", &Settings::database),
      string_key("database_password_file", &Settings::database_password_file),
      string_key("webhook_path", &Settings::webhook_path),
      top_integer("max_body_bytes", &Settings::max_body_bytes),
      secret_files_key(),
      top_integer("timestamp_tolerance_s", &Settings::timestamp_tolerance_s),
      top_integer("threads", &Settings::threads),
      top_integer("max_header_bytes", &Settings::max_header_bytes),
      top_integer("header_timeout_s", &Settings::header_timeout_s),
      top_integer("body_timeout_s", &Settings::body_timeout_s),
      top_integer("idle_timeout_s", &Settings::idle_timeout_s),
      top_integer("max_connections", &Settings::max_connections),
      top_integer("max_connections_per_ip", &Settings::max_connections_per_ip),
      top_integer("max_inflight_body_mib", &Settings::max_inflight_body_mib),
      top_integer("request_deadline_ms", &Settings::request_deadline_ms),
      top_integer("refusal_log_interval_s", &Settings::refusal_log_interval_s),
      top_integer("refusal_delay_ms", &Settings::refusal_delay_ms),
      top_integer("alert_silence_minutes", &Settings::alert_silence_minutes),
      top_integer("alert_signature_failures_per_minute", &Settings::alert_signature_failures_per_minute),
      top_integer("queue_high_water", &Settings::queue_high_water),
      top_integer("retry_after_s", &Settings::retry_after_s),
      top_integer("commit_deadline_ms", &Settings::commit_deadline_ms),
      string_key("synchronous", &Settings::synchronous),
      top_integer("cache_size_mib", &Settings::cache_size_mib),
      top_integer("min_free_disk_mib", &Settings::min_free_disk_mib),
      top_integer("max_database_mib", &Settings::max_database_mib),
      string_key("log_level", &Settings::log_level),
      section_string_key("service.base_url", &Settings::service, &ServiceSettings::base_url),
      section_string_key("service.api_key_file", &Settings::service, &ServiceSettings::api_key_file),
      section_string_key("service.api_key_header", &Settings::service, &ServiceSettings::api_key_header),
      section_string_key("service.ca_file", &Settings::service, &ServiceSettings::ca_file),
      service_integer("service.concurrency", &ServiceSettings::concurrency),
      service_integer("service.connect_timeout_s", &ServiceSettings::connect_timeout_s),
      service_integer("service.read_timeout_s", &ServiceSettings::read_timeout_s),
      service_integer("service.fetch_timeout_s", &ServiceSettings::fetch_timeout_s),
      service_integer("service.job_lease_s", &ServiceSettings::job_lease_s),
      service_integer("service.max_response_bytes", &ServiceSettings::max_response_bytes),
      service_integer("service.max_attempts", &ServiceSettings::max_attempts),
      service_integer("service.backoff_initial_s", &ServiceSettings::backoff_initial_s),
      service_integer("service.backoff_max_s", &ServiceSettings::backoff_max_s),
      teams_key(),
      section_string_key("management.url", &Settings::management, &ManagementSettings::url),
      section_string_key("management.key_file", &Settings::management, &ManagementSettings::key_file),
      section_string_key("management.org_id", &Settings::management, &ManagementSettings::org_id),
      management_base_urls_key(),
      forward_key(),
      integer_key("retention.body_days", [](Settings& s) -> int64_t& { return s.retention.body_days; }),
      section_string_key("read_api.token_file", &Settings::read_api, &ReadApiSettings::token_file),
      section_string_key("metrics.token_file", &Settings::metrics, &MetricsSettings::token_file),
      bool_key("console.enabled", [](Settings& s) -> bool& { return s.console.enabled; }),
      section_string_key("console.admin_token_file", &Settings::console, &ConsoleSettings::admin_token_file),
      integer_key("console.session_hours", [](Settings& s) -> int64_t& { return s.console.session_hours; }),
      section_string_key("tls.cert_file", &Settings::tls, &TlsSettings::cert_file),
      section_string_key("tls.key_file", &Settings::tls, &TlsSettings::key_file),
  };
}

const std::vector<Key>& keys() {
  static const std::vector<Key> all = make_keys();
  return all;
}

const Key* find_key(std::string_view name) {
  for (const auto& key : keys()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

std::string env_name(std::string_view key) {
  std::string name = "HEALTHHOOK_";
  for (char c : key) {
    name.push_back(c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  return name;
}

// Walks a TOML table; `prefix` is the dotted path of the table ("" at the top).
Result<void> apply_table(Settings& settings, const toml::table& table, const std::string& prefix) {
  for (const auto& [raw_key, node] : table) {
    const std::string name = prefix.empty() ? std::string(raw_key.str()) : prefix + "." + std::string(raw_key.str());
    if (const auto* sub = node.as_table(); sub && !find_key(name)) {
      auto applied = apply_table(settings, *sub, name);
      if (!applied) return applied;
      continue;
    }
    const Key* key = find_key(name);
    if (!key) return key_error(name, "unknown key");
    auto applied = key->from_toml(settings, node);
    if (!applied) return applied;
  }
  return {};
}

}  // namespace

Result<void> apply_toml_text(Settings& settings, std::string_view text, const std::string& source_name) {
  toml::table table;
  try {
    table = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return fail(source_name + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ": " +
                std::string(e.description()));
  }
  auto applied = apply_table(settings, table, "");
  if (!applied) return fail(source_name + ": " + applied.error());
  return {};
}

const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& key : keys()) out.push_back(key.name);
    return out;
  }();
  return names;
}

Result<Settings> load_settings(const std::optional<std::string>& config_file, EnvLookup environ_lookup,
                               const Overrides& flags) {
  Settings settings;
  if (config_file) {
    std::ifstream in(*config_file, std::ios::binary);
    if (!in) return fail(*config_file + ": cannot read");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto applied = apply_toml_text(settings, text, *config_file);
    if (!applied) return fail(applied.error());
    settings.base_dir = std::filesystem::absolute(*config_file).parent_path().string();
  } else {
    settings.base_dir = std::filesystem::current_path().string();
  }
  if (environ_lookup) {
    for (const auto& key : keys()) {
      const std::string var = env_name(key.name);
      if (const char* value = environ_lookup(var.c_str())) {
        auto applied = key.from_string(settings, value);
        if (!applied) return fail(var + " (" + applied.error() + ")");
      }
    }
  }
  for (const auto& [name, value] : flags) {
    const Key* key = find_key(name);
    if (!key) return key_error(name, "unknown key");
    auto applied = key->from_string(settings, value);
    if (!applied) return fail(applied.error());
  }
  auto valid = validate(settings);
  if (!valid) return fail(valid.error());
  return settings;
}

namespace {

// The API key goes in its own file and header: a base URL holds no credential, and no
// message shows one that does (only loggable_url()'s form of it).
Result<void> check_base_url(std::string_view key, const std::string& url) {
  if (!url.starts_with("https://") && !url.starts_with("http://127.0.0.1")) {
    return key_error(key, "must be an https:// URL (plain http only for http://127.0.0.1 in tests), got " +
                              quote_value(loggable_url(url)));
  }
  auto parsed = parse_http_url(url);
  if (!parsed) return key_error(key, parsed.error());
  if (parsed->has_userinfo || parsed->has_query || parsed->has_fragment) {
    return key_error(key, "must not contain user information, a query or a fragment (the API key goes in "
                          "api_key_file), got " + quote_value(loggable_url(url)));
  }
  return {};
}

Result<void> validate_teams(const std::vector<TeamSettings>& teams) {
  for (size_t i = 0; i < teams.size(); ++i) {
    const TeamSettings& team = teams[i];
    const std::string where = "service.teams[" + std::to_string(i) + "]";
    if (team.team_id.empty()) return key_error(where + ".team_id", "required");
    if (team.base_url.empty()) return key_error(where + ".base_url", "required");
    if (team.api_key_file.empty()) return key_error(where + ".api_key_file", "required");
    if (auto url = check_base_url(where + ".base_url", team.base_url); !url) return url;
    for (size_t j = 0; j < i; ++j) {
      if (teams[j].team_id == team.team_id) return key_error(where + ".team_id", "given twice: " + quote_value(team.team_id));
    }
  }
  return {};
}

// [management]: a URL needs the key and the organization; every URL is https.
Result<void> validate_management(const ManagementSettings& management) {
  if (!management.url.empty()) {
    if (auto url = check_base_url("management.url", management.url); !url) return url;
    if (management.key_file.empty()) return key_error("management.key_file", "required with management.url");
    if (management.org_id.empty()) return key_error("management.org_id", "required with management.url");
  }
  for (const auto& [region, url] : management.base_urls) {
    if (auto checked = check_base_url("management.base_urls." + region, url); !checked) return checked;
  }
  return {};
}

}  // namespace

const TeamSettings* find_team(const ServiceSettings& service, std::string_view team_id) {
  for (const auto& team : service.teams) {
    if (!team_id.empty() && team.team_id == team_id) return &team;
  }
  return nullptr;
}

Result<void> validate(const Settings& s) {
  auto range = [](std::string_view key, int64_t value, int64_t lo, int64_t hi) -> Result<void> {
    if (value < lo || value > hi) {
      return key_error(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                                std::to_string(value));
    }
    return {};
  };
  const Result<void> checks[] = {
      range("max_body_bytes", s.max_body_bytes, 1024, int64_t{1} << 30),
      range("timestamp_tolerance_s", s.timestamp_tolerance_s, 1, 7 * 86400),
      range("threads", s.threads, 0, 256),
      range("max_header_bytes", s.max_header_bytes, 1024, 1024 * 1024),
      range("header_timeout_s", s.header_timeout_s, 1, 3600),
      range("body_timeout_s", s.body_timeout_s, 1, 3600),
      range("idle_timeout_s", s.idle_timeout_s, 1, 86400),
      range("max_connections", s.max_connections, 1, 1000000),
      range("max_connections_per_ip", s.max_connections_per_ip, 1, 1000000),
      range("max_inflight_body_mib", s.max_inflight_body_mib, 1, 1 << 20),
      range("request_deadline_ms", s.request_deadline_ms, 100, 14000),
      range("refusal_log_interval_s", s.refusal_log_interval_s, 1, 86400),
      range("refusal_delay_ms", s.refusal_delay_ms, 0, 10000),
      range("alert_silence_minutes", s.alert_silence_minutes, 0, 525600),
      range("alert_signature_failures_per_minute", s.alert_signature_failures_per_minute, 0, 1000000000),
      range("queue_high_water", s.queue_high_water, 1, 10000000),
      range("retry_after_s", s.retry_after_s, 1, 3600),
      range("commit_deadline_ms", s.commit_deadline_ms, 10, 600000),
      range("cache_size_mib", s.cache_size_mib, 2, 1 << 20),
      range("min_free_disk_mib", s.min_free_disk_mib, 0, 1 << 30),
      range("max_database_mib", s.max_database_mib, 0, 1 << 30),
      range("service.concurrency", s.service.concurrency, 1, 1024),
      range("service.connect_timeout_s", s.service.connect_timeout_s, 1, 3600),
      range("service.read_timeout_s", s.service.read_timeout_s, 1, 3600),
      range("service.fetch_timeout_s", s.service.fetch_timeout_s, 1, 86400),
      range("service.job_lease_s", s.service.job_lease_s, 3, 86400),
      range("service.max_response_bytes", s.service.max_response_bytes, 1024, int64_t{1} << 32),
      range("service.max_attempts", s.service.max_attempts, 1, 1000),
      range("service.backoff_initial_s", s.service.backoff_initial_s, 1, 86400),
      range("service.backoff_max_s", s.service.backoff_max_s, 1, 7 * 86400),
      range("retention.body_days", s.retention.body_days, 0, 36500),
      range("console.session_hours", s.console.session_hours, 1, 24 * 30),
  };
  for (const auto& check : checks) {
    if (!check) return check;
  }
  if (s.synchronous != "full" && s.synchronous != "normal") {
    return key_error("synchronous", "must be \"full\" or \"normal\", got " + quote_value(s.synchronous));
  }
  if (s.log_level != "debug" && s.log_level != "info" && s.log_level != "warn" && s.log_level != "error") {
    return key_error("log_level", "must be debug, info, warn or error, got " + quote_value(s.log_level));
  }
  if (s.webhook_path.empty() || s.webhook_path.front() != '/') {
    return key_error("webhook_path", "must start with '/', got " + quote_value(s.webhook_path));
  }
  if (s.webhook_path.starts_with("/v1/") || s.webhook_path == "/healthz" || s.webhook_path == "/readyz" ||
      s.webhook_path == "/metrics") {
    return key_error("webhook_path", "collides with a built-in path: " + quote_value(s.webhook_path));
  }
  if (s.console.enabled && s.webhook_path.starts_with("/console")) {
    return key_error("webhook_path", "collides with the console's /console/: " + quote_value(s.webhook_path));
  }
  if (s.console.enabled && s.read_api.token_file.empty()) {
    return key_error("console.enabled", "needs read_api.token_file: the console reads through the read API, and its "
                                        "token signs in to a read-only console");
  }
  if (s.listen.rfind(':') == std::string::npos) {
    return key_error("listen", "expected HOST:PORT, got " + quote_value(s.listen));
  }
  if (s.database.empty()) return key_error("database", "must not be empty");
  if (s.signing_secret_files.empty()) return key_error("signing_secret_files", "at least one file is required");
  if (s.tls.cert_file.empty() != s.tls.key_file.empty()) {
    return key_error(s.tls.cert_file.empty() ? "tls.cert_file" : "tls.key_file",
                     "tls.cert_file and tls.key_file must be set together");
  }
  if (auto url = check_base_url("service.base_url", s.service.base_url); !url) return url;
  if (auto teams = validate_teams(s.service.teams); !teams) return teams;
  if (auto management = validate_management(s.management); !management) return management;
  return validate_forwards(s.forwards);
}

}  // namespace hh::config
