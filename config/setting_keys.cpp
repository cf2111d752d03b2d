#include "config/setting_keys.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>

#include "common/http_url.h"
#include "common/uuid_text.h"
#include "config/forward_settings.h"

namespace hh::config {
namespace {

// The setters below take `member`: a generic lambda that returns the setting's field, for a
// Settings that is const (show) or not (set).

template <typename Member>
SettingKey string_key(std::string name, Member member, std::string meaning, std::string allowed = "") {
  SettingKey key{{name, "string", std::move(allowed), std::move(meaning), std::nullopt, false}, {}, {}, {}, {}};
  key.from_toml = [name, member](Settings& s, const toml::node& node) -> Result<void> {
    const auto* value = node.as_string();
    if (!value) return key_error(name, "expected a string");
    member(s) = value->get();
    return {};
  };
  key.from_string = [member](Settings& s, std::string_view text) -> Result<void> {
    member(s) = std::string(text);
    return {};
  };
  key.show = [member](const Settings& s) { return toml_string(member(s)); };
  return key;
}

Result<int64_t> integer_from_text(std::string_view key, std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    return key_error(key, "expected an integer, got " + toml_string(text));
  }
  return value;
}

template <typename Member>
SettingKey integer_key(std::string name, Member member, IntegerRange range, std::string meaning) {
  SettingKey key{{name, "integer", "", std::move(meaning), range, false}, {}, {}, {}, {}};
  key.from_toml = [name, member](Settings& s, const toml::node& node) -> Result<void> {
    const auto* value = node.as_integer();
    if (!value) return key_error(name, "expected an integer");
    member(s) = value->get();
    return {};
  };
  key.from_string = [name, member](Settings& s, std::string_view text) -> Result<void> {
    auto value = integer_from_text(name, text);
    if (!value) return fail(value);
    member(s) = *value;
    return {};
  };
  key.show = [member](const Settings& s) { return std::to_string(member(s)); };
  key.integer_value = [member](const Settings& s) { return member(s); };
  return key;
}

// true / false in TOML; "true" / "false" from the environment or a flag.
template <typename Member>
SettingKey bool_key(std::string name, Member member, std::string meaning) {
  SettingKey key{{name, "true/false", "", std::move(meaning), std::nullopt, false}, {}, {}, {}, {}};
  key.from_toml = [name, member](Settings& s, const toml::node& node) -> Result<void> {
    const auto* value = node.as_boolean();
    if (!value) return key_error(name, "expected true or false");
    member(s) = value->get();
    return {};
  };
  key.from_string = [name, member](Settings& s, std::string_view text) -> Result<void> {
    if (text != "true" && text != "false") return key_error(name, "expected true or false, got " + toml_string(text));
    member(s) = text == "true";
    return {};
  };
  key.show = [member](const Settings& s) { return std::string(member(s) ? "true" : "false"); };
  return key;
}

// A key that only the configuration file can set (a list of tables has no sensible form as
// one environment variable or flag).
Result<void> file_only(std::string_view name, std::string_view form) {
  return key_error(name, "can only be set in the configuration file (" + std::string(form) + ")");
}

// [[service.teams]]: an array of tables {team_id, base_url, api_key_file}, all three required.
SettingKey teams_key() {
  const std::string name = "service.teams";
  SettingKey key{{name, "list of tables",
                  "each with team_id (the team's UUID, either case), base_url and api_key_file (all three required)",
                  "Teams of the service with their own region or API key ([[service.teams]] blocks): follow-ups "
                  "and commands for a user of that team use its base URL and key instead of [service]'s.",
                  std::nullopt, true},
                 {}, {}, {}, {}};
  key.from_toml = [name](Settings& s, const toml::node& node) -> Result<void> {
    const auto* array = node.as_array();
    if (!array) return key_error(name, "expected [[service.teams]] tables");
    std::vector<TeamSettings> teams;
    for (size_t i = 0; i < array->size(); ++i) {
      const std::string where = name + "[" + std::to_string(i) + "]";
      const auto* table = (*array)[i].as_table();
      if (!table) return key_error(where, "expected a table with team_id, base_url and api_key_file");
      TeamSettings team;
      for (const auto& [member_key, value] : *table) {
        std::string* field = member_key == "team_id"        ? &team.team_id
                             : member_key == "base_url"     ? &team.base_url
                             : member_key == "api_key_file" ? &team.api_key_file
                                                            : nullptr;
        const std::string member = where + "." + std::string(member_key.str());
        if (!field) return key_error(member, "unknown key");
        const auto* text = value.as_string();
        if (!text) return key_error(member, "expected a string");
        *field = text->get();
      }
      // Team ids are UUIDs, which deliveries write in lower case: an id written in capitals
      // is the same team (it once matched nothing). Anything else stays as written, for the
      // error that names it (load_settings.cpp).
      if (is_uuid(team.team_id)) team.team_id = uuid_key(team.team_id);
      teams.push_back(std::move(team));
    }
    s.service.teams = std::move(teams);
    return {};
  };
  key.from_string = [name](Settings&, std::string_view) { return file_only(name, "[[service.teams]]"); };
  key.show = [](const Settings&) { return std::string("none"); };
  return key;
}

// [management.base_urls]: a table of region = "base URL". From the environment or a flag:
// "us=https://…,eu=https://…".
SettingKey management_base_urls_key() {
  const std::string name = "management.base_urls";
  SettingKey key{{name, "table of strings", "region = \"base URL\"; as an environment variable or flag: REGION=URL,…",
                  "The service's base URL for teams of each region, for `teams --as-config`.", std::nullopt, false},
                 {}, {}, {}, {}};
  key.from_toml = [name](Settings& s, const toml::node& node) -> Result<void> {
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
  };
  key.from_string = [name](Settings& s, std::string_view text) -> Result<void> {
    std::vector<std::pair<std::string, std::string>> urls;
    size_t start = 0;
    while (start < text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      const std::string_view entry = text.substr(start, comma - start);
      const size_t eq = entry.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        // Shown masked: a URL with a ',' in its password is cut there, and the rest of the
        // password would be the entry shown.
        return key_error(name, "expected REGION=URL[,REGION=URL…], got " + toml_string(masked_url(entry)));
      }
      const std::string region(entry.substr(0, eq));
      // As a TOML table refuses a key given twice.
      if (std::any_of(urls.begin(), urls.end(), [&](const auto& url) { return url.first == region; })) {
        return key_error(name, "region " + toml_string(region) + " given twice");
      }
      urls.emplace_back(region, std::string(entry.substr(eq + 1)));
      start = comma + 1;
    }
    s.management.base_urls = std::move(urls);
    return {};
  };
  key.show = [](const Settings& s) {
    std::string out = "{";
    for (const auto& [region, url] : s.management.base_urls) {
      out += (out.size() > 1 ? ", " : " ") + region + " = " + toml_string(url);
    }
    return out + (out.size() > 1 ? " }" : "}");
  };
  return key;
}

// [[forward]] blocks (config/forward_settings.h, whose keys the reference lists too).
SettingKey forward_key() {
  const std::string name = "forward";
  SettingKey key{{name, "list of tables", "see the forward[].… keys",
                  "Destinations that changes or deliveries are pushed to ([[forward]] blocks).", std::nullopt, true},
                 {}, {}, {}, {}};
  key.from_toml = [](Settings& s, const toml::node& node) -> Result<void> {
    auto forwards = parse_forward_blocks(node);
    if (!forwards) return fail(forwards);
    s.forwards = std::move(*forwards);
    return {};
  };
  key.from_string = [name](Settings&, std::string_view) { return file_only(name, "[[forward]]"); };
  key.show = [](const Settings&) { return std::string("none"); };
  return key;
}

// The file names of a TOML array of strings, or nothing when `node` is not one.
std::optional<std::vector<std::string>> file_names(const toml::node& node) {
  const auto* array = node.as_array();
  if (!array) return std::nullopt;
  std::vector<std::string> files;
  for (const auto& item : *array) {
    const auto* file = item.as_string();
    if (!file) return std::nullopt;
    files.push_back(file->get());
  }
  return files;
}

// signing_secret_files: a TOML array of strings; from the environment or a flag, a
// comma-separated list, or the TOML array as the file writes it (text starting with '[').
SettingKey secret_files_key() {
  const std::string name = "signing_secret_files";
  SettingKey key{{name, "list of strings",
                  "at least one file; as an environment variable or flag: FILE,FILE or [\"FILE\", \"FILE\"]",
                  "Files holding one whsec_… signing secret each. Several: rotation, a delivery signed with any "
                  "of them is accepted.",
                  std::nullopt, false},
                 {}, {}, {}, {}};
  key.from_toml = [name](Settings& s, const toml::node& node) -> Result<void> {
    auto files = file_names(node);
    if (!files) return key_error(name, "expected an array of file names");
    s.signing_secret_files = std::move(*files);
    return {};
  };
  key.from_string = [name](Settings& s, std::string_view text) -> Result<void> {
    if (const size_t first = text.find_first_not_of(" \t"); first != std::string_view::npos && text[first] == '[') {
      // The array as a file writes it (it was split at its commas and taken for file names,
      // quotes and brackets included). An error never quotes the text: it may hold a secret
      // pasted where a file name belongs.
      std::optional<std::vector<std::string>> files;
      try {
        const toml::table parsed = toml::parse("v = " + std::string(text));
        if (const toml::node* value = parsed.get("v")) files = file_names(*value);
      } catch (const toml::parse_error&) {
      }
      if (!files) return key_error(name, "expected an array of file names");
      s.signing_secret_files = std::move(*files);
      return {};
    }
    std::vector<std::string> files;
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      if (comma > start) files.emplace_back(text.substr(start, comma - start));
      start = comma + 1;
    }
    s.signing_secret_files = std::move(files);
    return {};
  };
  key.show = [](const Settings& s) { return toml_string_list(s.signing_secret_files); };
  return key;
}

constexpr int64_t kMiB = 1 << 20;

std::vector<SettingKey> make_keys() {
  return {
      string_key("listen", [](auto& s) -> auto& { return s.listen; },
                 "Address and port the listener binds (webhooks, health, metrics, read API, console).",
                 "HOST:PORT, port 0-65535"),
      string_key("database", [](auto& s) -> auto& { return s.database; },
                 "The store: a SQLite file (created on first start), or a postgresql:// URI shared by several "
                 "instances. A relative file name is taken from the working directory the command runs in "
                 "(under systemd, WorkingDirectory=: /var/lib/healthhook), not from the config file's folder as "
                 "secret, CA and TLS files are; check-config prints the absolute path it checked.",
                 "a file name or a postgresql:// URI"),
      string_key("database_password_file", [](auto& s) -> auto& { return s.database_password_file; },
                 "PostgreSQL: a secret file holding the database password (never in the URI). Empty: the URI, "
                 "~/.pgpass or PGPASSFILE provide it."),
      string_key("webhook_path", [](auto& s) -> auto& { return s.webhook_path; },
                 "The path the service POSTs deliveries to.",
                 "starts with /; at most 1024 bytes; not /v1/…, /healthz, /readyz, /metrics or /console…"),
      integer_key("processing_sessions", [](auto& s) -> auto& { return s.processing_sessions; }, {1, 8},
                  "PostgreSQL only (a SQLite file refuses it): sessions that apply deliveries in this instance, "
                  "each a share of the users (16 shards in all, shared with the other instances). More use more "
                  "of the database server's cores for large deliveries, at a cost per small one; each adds a "
                  "connection, two threads and up to 32 MiB of bodies read ahead."),
      integer_key("max_body_bytes", [](auto& s) -> auto& { return s.max_body_bytes; }, {1024, int64_t{1} << 30},
                  "Largest request body accepted; a larger delivery gets 413. Lowered at start, with a warning, to what one row of the store holds with the headers (SQLite: about 999,979,520 bytes at the default max_header_bytes; PostgreSQL: about 1 GiB less the headers)."),
      secret_files_key(),
      integer_key("timestamp_tolerance_s", [](auto& s) -> auto& { return s.timestamp_tolerance_s; }, {1, 7 * 86400},
                  "How far a delivery's signed timestamp may be from this machine's clock, either way, before 401."),
      integer_key("threads", [](auto& s) -> auto& { return s.threads; }, {0, 256},
                  "I/O threads of the listener. 0: one per core minus one (the inbox writer has its own), at least 1."),
      integer_key("max_header_bytes", [](auto& s) -> auto& { return s.max_header_bytes; }, {1024, kMiB},
                  "Largest request line and headers, empty lines before the request line included; likewise a "
                  "chunked body's trailer fields. Larger: 431."),
      integer_key("header_timeout_s", [](auto& s) -> auto& { return s.header_timeout_s; }, {1, 3600},
                  "Deadline for a request head (a new connection's first head, from its accept); then the "
                  "connection is closed."),
      integer_key("body_timeout_s", [](auto& s) -> auto& { return s.body_timeout_s; }, {1, 3600},
                  "Deadline for a whole request body."),
      integer_key("idle_timeout_s", [](auto& s) -> auto& { return s.idle_timeout_s; }, {1, 86400},
                  "How long a keep-alive connection may wait for its next request."),
      integer_key("max_connections", [](auto& s) -> auto& { return s.max_connections; }, {1, 1000000},
                  "Open connections at once; lowered at start to fit the file-descriptor limit. When all are "
                  "taken, the one idle longest between requests is closed for the newcomer."),
      integer_key("max_connections_per_ip", [](auto& s) -> auto& { return s.max_connections_per_ip; }, {1, 1000000},
                  "Open connections from one client (an IPv4 address or an IPv6 /64). Behind a reverse proxy, set "
                  "it to max_connections."),
      integer_key("max_inflight_body_mib", [](auto& s) -> auto& { return s.max_inflight_body_mib; }, {1, kMiB},
                  "Request bodies held in memory, all connections together (MiB); a body that does not fit waits "
                  "up to a second, then gets 503. Raised at start to max_body_bytes when smaller (a warning)."),
      integer_key("request_deadline_ms", [](auto& s) -> auto& { return s.request_deadline_ms; }, {100, 14000},
                  "From a complete request to its answer: a commit not done by then gets 503 with Retry-After "
                  "(the service gives up after about 15 s). PostgreSQL: also how long a read API or console page "
                  "waits for the database (then 503 with Retry-After), and a /metrics scrape half of it (then it "
                  "answers without the database's figures)."),
      integer_key("refusal_log_interval_s", [](auto& s) -> auto& { return s.refusal_log_interval_s; }, {1, 86400},
                  "Refusals (401, 413, limits, slow clients) are logged as one summary line per interval."),
      integer_key("refusal_delay_ms", [](auto& s) -> auto& { return s.refusal_delay_ms; }, {0, 10000},
                  "A 401 on a connection that never carried a correctly signed delivery waits this long. 0: at once."),
      integer_key("alert_silence_minutes", [](auto& s) -> auto& { return s.alert_silence_minutes; }, {0, 525600},
                  "No verified delivery for this long: a no_verified_delivery warning in the log. 0: off."),
      integer_key("alert_signature_failures_per_minute",
                  [](auto& s) -> auto& { return s.alert_signature_failures_per_minute; }, {0, 1000000000},
                  "This many 401s within a minute: a signature_failures warning (a rotated secret looks like "
                  "this). 0: off."),
      integer_key("queue_high_water", [](auto& s) -> auto& { return s.queue_high_water; }, {1, 10000000},
                  "Deliveries waiting for their commit; above it new ones get 503 and /readyz is 503."),
      integer_key("retry_after_s", [](auto& s) -> auto& { return s.retry_after_s; }, {1, 3600},
                  "The Retry-After of a 503."),
      integer_key("commit_deadline_ms", [](auto& s) -> auto& { return s.commit_deadline_ms; }, {10, 600000},
                  "A commit still failing (database locked) after this long: 503. Keep it well below the unit's WatchdogSec and TimeoutStopSec (30 s each): the writer waits this long for a lock, and stopping waits for it."),
      string_key("synchronous", [](auto& s) -> auto& { return s.synchronous; },
                 "SQLite: \"full\" makes each 2xx survive power loss; \"normal\" only a crash of the process.",
                 "\"full\" or \"normal\""),
      integer_key("cache_size_mib", [](auto& s) -> auto& { return s.cache_size_mib; }, {2, kMiB},
                  "SQLite page cache per connection (MiB)."),
      integer_key("min_free_disk_mib", [](auto& s) -> auto& { return s.min_free_disk_mib; }, {0, int64_t{1} << 30},
                  "Free disk below this: deliveries get 503 and /readyz is 503, before SQLite would fail."),
      integer_key("max_database_mib", [](auto& s) -> auto& { return s.max_database_mib; }, {0, int64_t{1} << 30},
                  "SQLite: the file may not grow past this (then 503). 0: unlimited."),
      string_key("log_level", [](auto& s) -> auto& { return s.log_level; },
                 "Least severe log line written (one JSON object per line on stderr); reloaded on SIGHUP.",
                 "debug, info, warn or error"),
      string_key("service.base_url", [](auto& s) -> auto& { return s.service.base_url; },
                 "The service's API for follow-ups and commands.",
                 "https://…, no user information, query or fragment"),
      string_key("service.api_key_file", [](auto& s) -> auto& { return s.service.api_key_file; },
                 "Secret file holding the service's API key, alone on one line. Empty: no follow-up fetches."),
      string_key("service.api_key_header", [](auto& s) -> auto& { return s.service.api_key_header; },
                 "The header the API key is sent in (not Host, nor one that frames the request or that every "
                 "request carries: Accept, Accept-Encoding, Content-Type, User-Agent)."),
      string_key("service.ca_file", [](auto& s) -> auto& { return s.service.ca_file; },
                 "CA certificates for the service's TLS. Empty: the system trust store."),
      integer_key("service.concurrency", [](auto& s) -> auto& { return s.service.concurrency; }, {1, 1024},
                  "Follow-up fetches in flight at once."),
      integer_key("service.connect_timeout_s", [](auto& s) -> auto& { return s.service.connect_timeout_s; },
                  {1, 3600}, "Deadline for connecting and the TLS handshake."),
      integer_key("service.read_timeout_s", [](auto& s) -> auto& { return s.service.read_timeout_s; }, {1, 3600},
                  "No bytes for this long, or an answer's status line and headers not complete within it: the fetch fails."),
      integer_key("service.fetch_timeout_s", [](auto& s) -> auto& { return s.service.fetch_timeout_s; }, {1, 86400},
                  "Deadline for one fetch whole: connect, request and the entire answer."),
      integer_key("service.job_lease_s", [](auto& s) -> auto& { return s.service.job_lease_s; }, {3, 86400},
                  "PostgreSQL: a claimed follow-up not renewed for this long is taken over by another instance."),
      integer_key("service.max_response_bytes", [](auto& s) -> auto& { return s.service.max_response_bytes; },
                  {1024, int64_t{1} << 32}, "Largest answer of the service accepted (after gzip)."),
      integer_key("service.max_attempts", [](auto& s) -> auto& { return s.service.max_attempts; }, {1, 1000},
                  "Attempts of a follow-up before it is dead."),
      integer_key("service.backoff_initial_s", [](auto& s) -> auto& { return s.service.backoff_initial_s; },
                  {1, 86400}, "First wait after a failed fetch; doubles with each failure (with jitter)."),
      integer_key("service.backoff_max_s", [](auto& s) -> auto& { return s.service.backoff_max_s; },
                  {1, 7 * 86400}, "Longest wait between attempts of a follow-up."),
      teams_key(),
      string_key("management.url", [](auto& s) -> auto& { return s.management.url; },
                 "The organization's management endpoint, for `teams` and `check-config --online`. Empty: not "
                 "configured.",
                 "https://…"),
      string_key("management.key_file", [](auto& s) -> auto& { return s.management.key_file; },
                 "Secret file holding the management key (required with management.url)."),
      string_key("management.org_id", [](auto& s) -> auto& { return s.management.org_id; },
                 "The organization's UUID (required with management.url)."),
      management_base_urls_key(),
      forward_key(),
      integer_key("retention.body_days", [](auto& s) -> auto& { return s.retention.body_days; }, {0, 36500},
                  "Bodies and headers of applied deliveries received more than this many days ago are removed "
                  "(the row, its message id and outcome stay). 0: keep forever."),
      string_key("read_api.token_file", [](auto& s) -> auto& { return s.read_api.token_file; },
                 "Secret file holding the read API's bearer token. Empty: the read API is off. "
                 "Re-read on SIGHUP (the old token is refused from then on); turning the read API on needs a restart."),
      string_key("metrics.token_file", [](auto& s) -> auto& { return s.metrics.token_file; },
                 "Secret file holding a bearer token for GET /metrics. Empty: /metrics needs no token. "
                 "Re-read on SIGHUP."),
      bool_key("console.enabled", [](auto& s) -> auto& { return s.console.enabled; },
               "The operators' console at /console/ (needs read_api.token_file: its token signs in read-only)."),
      string_key("console.admin_token_file", [](auto& s) -> auto& { return s.console.admin_token_file; },
                 "Secret file holding the token that signs in to the console with actions. Empty: no actions. "
                 "Re-read on SIGHUP: a replaced token signs in no more and its sessions end; turning it on needs a "
                 "restart."),
      integer_key("console.session_hours", [](auto& s) -> auto& { return s.console.session_hours; }, {1, 24 * 30},
                  "A console session ends this long after sign-in (or after an idle hour)."),
      string_key("tls.cert_file", [](auto& s) -> auto& { return s.tls.cert_file; },
                 "The listener's certificate chain (PEM); with tls.key_file. Both empty: plain HTTP."),
      string_key("tls.key_file", [](auto& s) -> auto& { return s.tls.key_file; },
                 "Secret file holding the listener's private key (PEM); with tls.cert_file."),
  };
}

}  // namespace

const std::vector<SettingKey>& setting_keys() {
  static const std::vector<SettingKey> all = make_keys();
  return all;
}

const SettingKey* find_setting_key(std::string_view name) {
  for (const auto& key : setting_keys()) {
    if (key.doc.name == name) return &key;
  }
  return nullptr;
}

Error key_error(std::string_view key, std::string_view what) {
  return fail(std::string(key) + ": " + std::string(what));
}

Result<void> check_range(const KeyDoc& doc, int64_t value, std::string_view name) {
  if (!doc.range || (value >= doc.range->lo && value <= doc.range->hi)) return {};
  return key_error(name, "must be between " + std::to_string(doc.range->lo) + " and " +
                               std::to_string(doc.range->hi) + ", got " + std::to_string(value));
}

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {  // TOML's basic strings hold no control characters
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04X", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
      continue;
    }
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string toml_string_list(const std::vector<std::string>& texts) {
  std::string out = "[";
  for (size_t i = 0; i < texts.size(); ++i) out += (i ? ", " : "") + toml_string(texts[i]);
  return out + "]";
}

std::string duration_text(int64_t seconds) {
  for (const auto& [unit, size] : {std::pair{"d", 86400}, std::pair{"h", 3600}, std::pair{"m", 60}}) {
    if (seconds > 0 && seconds % size == 0) return "\"" + std::to_string(seconds / size) + unit + "\"";
  }
  return std::to_string(seconds);
}

}  // namespace hh::config
