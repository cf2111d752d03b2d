#include "config/load_settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <toml++/toml.h>

#include "common/file_text.h"
#include "common/http_url.h"
#include "common/uuid_text.h"
#include "config/forward_settings.h"
#include "config/setting_keys.h"
#include "config/toml_syntax_error.h"

namespace hh::config {
namespace {

constexpr size_t kMaxWebhookPathBytes = 1024;

std::string env_name(std::string_view key) {
  std::string name = "HEALTHHOOK_";
  for (char c : key) {
    name.push_back(c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  return name;
}

// The line of the key `error` is about ("max_body_bytes: …"; "forward[1].url: …": that
// key's line, else that [[forward]] block's), from `lines`.
std::optional<int64_t> line_of(const std::string& error, const KeyLines& lines) {
  const std::string key = error.substr(0, error.find(": "));
  auto line = lines.find(key);
  if (line == lines.end() && key.find(']') != std::string::npos) line = lines.find(key.substr(0, key.find(']') + 1));
  if (line == lines.end()) return std::nullopt;
  return line->second;
}

// Walks a TOML table; `prefix` is the dotted path of the table ("" at the top). Each key's
// line, and each element's of an array of tables, goes to `lines`, and a key's error names
// the file and that line ("healthhook.toml:3: max_body_bytes: …").
Result<void> apply_table(Settings& settings, const toml::table& table, const std::string& prefix,
                         const std::string& source_name, KeyLines& lines) {
  for (const auto& [raw_key, node] : table) {
    const std::string name = prefix.empty() ? std::string(raw_key.str()) : prefix + "." + std::string(raw_key.str());
    if (const auto* sub = node.as_table(); sub && !find_setting_key(name)) {
      auto applied = apply_table(settings, *sub, name, source_name, lines);
      if (!applied) return applied;
      continue;
    }
    const int64_t key_line = raw_key.source().begin.line;
    const SettingKey* key = find_setting_key(name);
    const std::string where = source_name + ":" + std::to_string(key_line);
    if (!key) {
      // `service = 3` where [service] belongs: a table, not an unknown key.
      const bool table = std::any_of(setting_keys().begin(), setting_keys().end(),
                                     [&](const SettingKey& k) { return k.doc.name.starts_with(name + "."); });
      return fail(where + ": " + key_error(name, table ? "expected a table ([" + name + "])" : "unknown key").message);
    }
    lines[name] = key_line;
    if (const auto* array = node.as_array()) {
      for (size_t i = 0; i < array->size(); ++i) {
        const std::string element_name = name + "[" + std::to_string(i) + "]";
        lines[element_name] = (*array)[i].source().begin.line;
        const auto* element = (*array)[i].as_table();
        if (!element) continue;
        // Each key of a [[forward]] block on its own line: the value's, where the key has none.
        for (const auto& [element_key, value] : *element) {
          const auto line = element_key.source().begin.line ? element_key.source().begin.line : value.source().begin.line;
          if (line) lines[element_name + "." + std::string(element_key.str())] = line;
        }
      }
    }
    auto applied = key->from_toml(settings, node);
    if (!applied) {
      const int64_t line = line_of(applied.error(), lines).value_or(key_line);
      return fail(applied, source_name + ":" + std::to_string(line));
    }
    settings.given[name] = {Settings::Origin::Kind::file_line, where};
  }
  return {};
}

// `error` of a merged setting, prefixed with the file and line that set it when the file
// did (and neither the environment nor a flag set it again).
Error with_file_line(const Result<void>& error, const std::optional<std::string>& config_file,
                     const KeyLines& lines) {
  const auto line = line_of(error.error(), lines);
  if (!config_file || !line) return fail(error);
  return fail(error, *config_file + ":" + std::to_string(*line));
}

}  // namespace

Result<void> apply_toml_text(Settings& settings, std::string_view text, const std::string& source_name,
                             KeyLines* lines) {
  toml::table table;
  try {
    table = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return fail(toml_syntax_error(text, source_name, where.line, where.column, e.description()));
  }
  KeyLines unused;
  return apply_table(settings, table, "", source_name, lines ? *lines : unused);
}

std::string located(const Settings& settings, const std::string& key, std::string message) {
  const auto given = settings.given.find(key);
  if (given == settings.given.end()) return message;
  // As load errors name them: "FILE:LINE: message", "HEALTHHOOK_VAR (message)".
  const auto& [kind, place] = given->second;
  switch (kind) {
    case Settings::Origin::Kind::file_line: return place + ": " + message;
    case Settings::Origin::Kind::variable: return place + " (" + message + ")";
    case Settings::Origin::Kind::flag: break;
  }
  return message;
}

const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& key : setting_keys()) out.push_back(key.doc.name);
    return out;
  }();
  return names;
}

Result<Settings> load_settings(const std::optional<std::string>& config_file, EnvLookup environ_lookup,
                               const Overrides& flags, ConfigFileKind file_kind) {
  Settings settings;
  KeyLines lines;  // of the keys the file set, until the environment or a flag sets them again
  std::map<std::string, std::string> variables;  // the keys the environment set (until a flag does), by key
  if (config_file) {
    // Bounded: a configuration is a few KiB.
    auto text = file_kind == ConfigFileKind::regular_only ? read_regular_file_text(*config_file)
                                                          : read_file_text(*config_file);
    if (!text) return fail(text);
    auto applied = apply_toml_text(settings, *text, *config_file, &lines);
    if (!applied) return fail(applied);
    settings.base_dir = std::filesystem::absolute(*config_file).parent_path().string();
  } else {
    settings.base_dir = std::filesystem::current_path().string();
  }
  if (environ_lookup) {
    for (const auto& key : setting_keys()) {
      const std::string var = env_name(key.doc.name);
      if (const char* value = environ_lookup(var.c_str())) {
        auto applied = key.from_string(settings, value);
        if (!applied) return fail(applied.error_kind(), var + " (" + applied.error() + ")");
        settings.given[std::string(key.doc.name)] = {Settings::Origin::Kind::variable, var};
        lines.erase(std::string(key.doc.name));
        variables[std::string(key.doc.name)] = var;
      }
    }
  }
  for (const auto& [name, value] : flags) {
    const SettingKey* key = find_setting_key(name);
    if (!key) {
      // A key inside a list of tables ("forward[0].batch", "service.teams.team_id"): said as
      // the list itself is, not as a key that does not exist.
      for (const SettingKey& list : setting_keys()) {
        const std::string& listed = list.doc.name;
        if (list.doc.file_only && name.size() > listed.size() && name.starts_with(listed) &&
            (name[listed.size()] == '[' || name[listed.size()] == '.')) {
          return fail(list.from_string(settings, value));
        }
      }
      return key_error(name, "unknown key");
    }
    auto applied = key->from_string(settings, value);
    if (!applied) return fail(applied);
    settings.given[std::string(key->doc.name)] = {Settings::Origin::Kind::flag, ""};
    lines.erase(std::string(key->doc.name));
    variables.erase(std::string(key->doc.name));
  }
  auto valid = validate(settings);
  if (!valid) {
    // A value the environment set is named by its variable, as its type errors are above.
    const auto variable = variables.find(valid.error().substr(0, valid.error().find(": ")));
    if (variable != variables.end()) return fail(valid.error_kind(), variable->second + " (" + valid.error() + ")");
    return with_file_line(valid, config_file, lines);
  }
  return settings;
}

namespace {

// The API key goes in its own file and header: a base URL holds no credential, and no
// message shows one that does (only masked_url()'s form of it).
Result<void> check_base_url(std::string_view key, const std::string& url) {
  if (!url.starts_with("https://") && !url.starts_with("http://127.0.0.1")) {
    return key_error(key, "must be an https:// URL (plain http only for http://127.0.0.1 in tests), got " +
                              toml_string(masked_url(url)));
  }
  auto parsed = parse_http_url(url);
  if (!parsed) return key_error(key, parsed.error());
  if (parsed->has_userinfo || parsed->has_query || parsed->has_fragment) {
    return key_error(key, "must not contain user information, a query or a fragment (the API key goes in "
                          "api_key_file), got " + toml_string(masked_url(url)));
  }
  return {};
}

Result<void> validate_teams(const std::vector<TeamSettings>& teams) {
  for (size_t i = 0; i < teams.size(); ++i) {
    const TeamSettings& team = teams[i];
    const std::string where = "service.teams[" + std::to_string(i) + "]";
    if (team.team_id.empty()) return key_error(where + ".team_id", "required");
    // The service names teams by UUID: anything else ("team-b", a name) matches no delivery,
    // and the follow-ups of the team it meant went to [service] with [service]'s key.
    if (!is_uuid(team.team_id)) {
      return key_error(where + ".team_id", "must be the team's UUID (as deliveries carry it in team_id), got " +
                                               toml_string(team.team_id));
    }
    if (team.base_url.empty()) return key_error(where + ".base_url", "required");
    if (team.api_key_file.empty()) return key_error(where + ".api_key_file", "required");
    if (auto url = check_base_url(where + ".base_url", team.base_url); !url) return url;
    for (size_t j = 0; j < i; ++j) {
      if (same_uuid(teams[j].team_id, team.team_id)) {
        return key_error(where + ".team_id", "given twice: " + toml_string(team.team_id));
      }
    }
  }
  return {};
}

// [management]: a URL needs the key and the organization; every URL is https.
Result<void> validate_management(const ManagementSettings& management) {
  if (!management.url.empty()) {
    if (auto url = check_base_url("management.url", management.url); !url) return url;
    // Named by management.url, which the file has a line for.
    for (const auto& [key, value] : {std::pair{"management.key_file", &management.key_file},
                                     std::pair{"management.org_id", &management.org_id}}) {
      if (value->empty()) return key_error("management.url", std::string(key) + " is not set (required with management.url)");
    }
  }
  // The organization is named by its UUID in every management path (/v1/org/{org_id}/…);
  // without management.url nothing uses it (a placeholder stays harmless).
  if (!management.url.empty() && !management.org_id.empty() && !is_uuid(management.org_id)) {
    return key_error("management.org_id", "must be the organization's UUID");
  }
  for (const auto& [region, url] : management.base_urls) {
    if (auto checked = check_base_url("management.base_urls." + region, url); !checked) return checked;
  }
  return {};
}

}  // namespace

bool is_header_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

bool is_reserved_request_header(std::string_view name) {
  // Framing and hop-by-hop headers (RFC 9110 §7.6.1, RFC 9112 §6), Host, and the ones the
  // client sets on every request (fetcher/https_client.cpp): the key in one of them would
  // replace it, or be read by whatever carries the request, not by the service.
  static constexpr std::string_view kReserved[] = {
      "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade",
      "proxy-connection", "expect", "accept-encoding", "content-encoding", "content-type", "accept", "user-agent"};
  return std::any_of(std::begin(kReserved), std::end(kReserved), [name](std::string_view reserved) {
    return name.size() == reserved.size() && std::equal(name.begin(), name.end(), reserved.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           });
  });
}

const TeamSettings* find_team(const ServiceSettings& service, std::string_view team_id) {
  for (const auto& team : service.teams) {
    // Either case: a --team or a stored delivery's team id in capitals is the same team.
    if (!team_id.empty() && same_uuid(team.team_id, team_id)) return &team;
  }
  return nullptr;
}

Result<void> validate(const Settings& s) {
  // Integer ranges come from the key table (setting_keys.cpp), which the reference prints.
  for (const auto& key : setting_keys()) {
    if (!key.doc.range) continue;
    if (auto in_range = check_range(key.doc, key.integer_value(s), key.doc.name); !in_range) return in_range;
  }
  if (s.synchronous != "full" && s.synchronous != "normal") {
    return key_error("synchronous", "must be \"full\" or \"normal\", got " + toml_string(s.synchronous));
  }
  if (s.log_level != "debug" && s.log_level != "info" && s.log_level != "warn" && s.log_level != "error") {
    return key_error("log_level", "must be debug, info, warn or error, got " + toml_string(s.log_level));
  }
  if (s.webhook_path.empty() || s.webhook_path.front() != '/') {
    return key_error("webhook_path", "must start with '/', got " + toml_string(s.webhook_path));
  }
  // The service's request line carries it whole, within max_header_bytes: a path of
  // kilobytes is a pasted mistake (and would be echoed back in every message).
  if (s.webhook_path.size() > kMaxWebhookPathBytes) {
    return key_error("webhook_path", "longer than " + std::to_string(kMaxWebhookPathBytes) + " bytes");
  }
  // The path as a request line spells it: no query, fragment, blank or control character.
  if (std::any_of(s.webhook_path.begin(), s.webhook_path.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7f || c == '?' || c == '#';
      })) {
    return key_error("webhook_path", "must be a path without a query, a fragment, blanks or control characters, got " +
                                         toml_string(s.webhook_path));
  }
  if (s.webhook_path.starts_with("/v1/") || s.webhook_path == "/healthz" || s.webhook_path == "/readyz" ||
      s.webhook_path == "/metrics") {
    return key_error("webhook_path", "collides with a built-in path: " + toml_string(s.webhook_path));
  }
  if (s.console.enabled && s.webhook_path.starts_with("/console")) {
    return key_error("webhook_path", "collides with the console's /console/: " + toml_string(s.webhook_path));
  }
  if (s.console.enabled && s.read_api.token_file.empty()) {
    return key_error("console.enabled", "needs read_api.token_file: the console reads through the read API, and its "
                                        "token signs in to a read-only console");
  }
  if (s.listen.rfind(':') == std::string::npos) {
    return key_error("listen", "expected HOST:PORT, got " + toml_string(s.listen));
  }
  // The resolver would take "99999" modulo 65536, and a name ("http") from /etc/services.
  if (const std::string_view port = std::string_view(s.listen).substr(s.listen.rfind(':') + 1);
      port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
      std::stoul(std::string(port)) > 65535) {
    return key_error("listen", "the port must be a number from 0 to 65535, got " + toml_string(s.listen));
  }
  if (s.database.empty()) return key_error("database", "must not be empty");
  if (s.signing_secret_files.empty()) return key_error("signing_secret_files", "at least one file is required");
  if (s.tls.cert_file.empty() != s.tls.key_file.empty()) {
    // Named by the one that is set: the file has a line for it.
    const bool cert_set = !s.tls.cert_file.empty();
    return key_error(cert_set ? "tls.cert_file" : "tls.key_file",
                     std::string("tls.cert_file and tls.key_file must be set together (") +
                         (cert_set ? "tls.key_file" : "tls.cert_file") + " is not set)");
  }
  if (auto url = check_base_url("service.base_url", s.service.base_url); !url) return url;
  if (!is_header_name(s.service.api_key_header)) {
    return key_error("service.api_key_header", "not a header name: " + toml_string(s.service.api_key_header));
  }
  if (is_reserved_request_header(s.service.api_key_header)) {
    return key_error("service.api_key_header",
                     toml_string(s.service.api_key_header) +
                         " is a header healthhook sets itself or one that frames the request; the key cannot go in "
                         "it (the service's is x-vital-api-key)");
  }
  if (auto teams = validate_teams(s.service.teams); !teams) return teams;
  if (auto management = validate_management(s.management); !management) return management;
  return validate_forwards(s.forwards);
}

}  // namespace hh::config
