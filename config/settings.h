#pragma once
// Every setting healthhook reads, with its default. Names match the TOML keys of
// spec §6; limits live here as named values, not as literals in the code that uses them.
//
// Sources, lowest to highest precedence: defaults, the TOML file (--config),
// HEALTHHOOK_* environment variables (key upper-cased, '.' -> '_':
// service.base_url -> HEALTHHOOK_SERVICE_BASE_URL), then command-line flags.
// Secrets are never settings: settings only name the files that hold them.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hh::config {

// One [[service.teams]] entry: a team of the service with its own region (base URL) and
// API key. Follow-ups and commands for a user of that team use these instead of
// [service]'s base_url and api_key_file (everything else comes from [service]).
struct TeamSettings {
  std::string team_id;       // the service's team id, a UUID as deliveries carry it ($.team_id); lower case once loaded
  std::string base_url;      // e.g. the EU base URL
  std::string api_key_file;  // that team's API key
};

struct ServiceSettings {
  std::string base_url = "https://api.sandbox.example";
  std::string api_key_file;                        // empty: follow-ups disabled
  std::string api_key_header = "x-vital-api-key";
  std::string ca_file;                             // empty: system trust store
  int64_t concurrency = 4;                         // fetches in flight at once
  int64_t connect_timeout_s = 10;
  int64_t read_timeout_s = 60;                     // no bytes for this long: the fetch fails
  int64_t fetch_timeout_s = 600;                   // one fetch whole: connect, request and the entire answer
  int64_t job_lease_s = 300;                       // PostgreSQL: a claimed job not renewed for this long is taken over
  int64_t max_response_bytes = 256 * 1024 * 1024;
  int64_t max_attempts = 8;                        // then the job is `dead`
  int64_t backoff_initial_s = 5;
  int64_t backoff_max_s = 3600;
  std::vector<TeamSettings> teams;  // [[service.teams]]; empty: one team, the settings above
};

// The team entry for `team_id` (compared without regard to case), or null (then [service]
// itself applies).
const TeamSettings* find_team(const ServiceSettings& service, std::string_view team_id);

// [management]: the organization's management endpoint (service interface: GET
// {management_url}/v1/org/{org_id}/team with the management key), for `healthhook teams`
// and `check-config --online`. Nothing else uses it; `serve` does not read the key.
struct ManagementSettings {
  std::string url;       // e.g. https://api.example/management; empty: not configured
  std::string key_file;  // the management key (a team API key is not accepted there)
  std::string org_id;    // the organization's UUID
  // [management.base_urls]: region ("us", "eu", …) → the service's base URL for teams of
  // that region, for `teams --as-config`. In the order written.
  std::vector<std::pair<std::string, std::string>> base_urls;
};

// [retention] (spec §11).
struct RetentionSettings {
  // Bodies and headers of applied deliveries received more than this many days ago are
  // removed from the inbox (the row, its message id and outcome stay). 0: keep forever.
  int64_t body_days = 0;
};

// One [[forward]] block (spec §10): a backend that changes or deliveries are pushed to.
// Parsed and checked by config/forward_settings.cpp.
struct ForwardSettings {
  std::string name;                 // names the destination in the outbox, metrics and logs; default: url without its query
  std::string url;                  // https://…; http:// only to loopback unless allow_plain_http
  std::string secret_file;          // "whsec_…": signs every message (Standard Webhooks)
  std::vector<std::string> events;  // globs over event_type; empty: every delivery
  std::string mode = "changes";     // "changes" (derived rows) or "deliveries" (raw bodies)
  int64_t batch = 1;                // changes per POST (changes mode)
  bool ordered = true;              // one message in flight per (user, resource)
  int64_t max_attempts = 50;        // then `dead`
  int64_t max_age_s = 3 * 86400;    // key `max_age` ("3d", "12h", "30m", "45s" or seconds): older → `dead`
  int64_t timeout_ms = 10000;       // per POST: connect, send and the answer's status, all told
  int64_t concurrency = 4;          // requests in flight to this destination
  int64_t max_outbox_mib = 1024;    // disk budget of all its outbox keeps (pending, dead, dropped ranges)
  int64_t backoff_initial_ms = 1000;
  int64_t backoff_max_s = 600;
  bool allow_plain_http = false;    // http:// to a non-loopback host (a private network)
  std::string ca_file;              // empty: the system trust store
};

// The [[forward]] block `given` names: by its name, or by its 1-based position among the
// blocks ("2"), as every command and the console take a destination.
std::optional<std::string> forward_named(const std::vector<ForwardSettings>& forwards, std::string_view given);

struct ReadApiSettings {
  std::string token_file;  // empty: read API disabled
};

struct MetricsSettings {
  std::string token_file;  // empty: GET /metrics needs no token
};

// [console] (spec §12, docs/console.md): the operators' console under /console/ on the
// listener. Off unless enabled; needs read_api.token_file (the read token signs in to a
// read-only console).
struct ConsoleSettings {
  bool enabled = false;
  std::string admin_token_file;  // empty: no admin sign-in (no actions)
  int64_t session_hours = 8;     // a session ends this long after sign-in (or after an idle hour)
};

struct TlsSettings {
  std::string cert_file;  // both empty: plain HTTP
  std::string key_file;
};

struct Settings {
  std::string listen = "127.0.0.1:8080";
  std::string database = "healthhook.db";
  // PostgreSQL: a file holding the database password (a secret file: systemd credential or
  // path, config/secrets.h); "" when the URI, ~/.pgpass or PGPASSFILE provide it.
  std::string database_password_file;
  // PostgreSQL: processing sessions of this instance, each applying its share of the shards
  // of users (decision 050), on a connection and a thread of its own. More use more of the
  // database server's cores for large deliveries; each step of small ones costs the server
  // about as much, so more sessions cost more per small delivery (decision 055).
  int64_t processing_sessions = 1;
  std::string webhook_path = "/webhooks";
  int64_t max_body_bytes = 4 * 1024 * 1024;
  std::vector<std::string> signing_secret_files = {"secret"};
  int64_t timestamp_tolerance_s = 300;

  // Listener.
  int64_t threads = 0;                 // 0: one per core minus one (the writer thread needs a core), at least 1
  int64_t max_header_bytes = 16 * 1024;
  int64_t header_timeout_s = 10;       // request line + headers, once the first byte arrived
  int64_t body_timeout_s = 30;         // the whole body
  int64_t idle_timeout_s = 60;         // keep-alive wait for the next request
  int64_t max_connections = 1024;      // lowered at start to fit the file-descriptor limit
  int64_t max_connections_per_ip = 64; // per client address
  // Request bodies being read, all connections together; a body that would pass it waits
  // (briefly) for room, then gets 503. Memory bound: docs/facing-the-internet.md.
  int64_t max_inflight_body_mib = 64;
  // From a complete request head to the answer: a commit not done by then gets 503 (the
  // service gives up after about 15 s and retries; its retry is then a duplicate).
  int64_t request_deadline_ms = 10000;
  int64_t refusal_log_interval_s = 60; // refusals (401, limits) are logged as one summary line per interval
  // How long a 401 waits before it is sent, on a connection that has never carried a
  // correctly signed delivery (receiver/http/session.h); 0: answered at once.
  int64_t refusal_delay_ms = 250;
  // Alarms in the log (metrics/delivery_alarms.h); 0 turns one off. No verified delivery
  // for this long: the endpoint may be disabled at the service, or the network changed.
  int64_t alert_silence_minutes = 60;
  // 401s in one minute from this many on: a rotated signing secret looks like this.
  int64_t alert_signature_failures_per_minute = 10;

  // Inbox writer.
  int64_t queue_high_water = 4096;     // deliveries waiting for commit; above: 503
  int64_t retry_after_s = 5;           // Retry-After on 503
  int64_t commit_deadline_ms = 5000;   // a commit still failing after this: 503
  std::string synchronous = "full";    // "full" (durable on power loss) or "normal"
  int64_t cache_size_mib = 64;
  int64_t min_free_disk_mib = 64;      // below: 503 before SQLite would fail
  int64_t max_database_mib = 0;        // 0: unlimited; else the file may not grow past this (then 503)

  std::string log_level = "info";

  ServiceSettings service;
  ManagementSettings management;
  RetentionSettings retention;
  std::vector<ForwardSettings> forwards;  // [[forward]]
  ReadApiSettings read_api;
  MetricsSettings metrics;
  ConsoleSettings console;
  TlsSettings tls;

  // Where relative secret-file paths are resolved (the config file's folder).
  std::string base_dir = ".";

  // Where a key was set last: what a key that only one backend has is refused for, naming
  // that place (app/store_settings.cpp, config::located).
  struct Origin {
    enum class Kind { file_line, variable, flag };
    Kind kind = Kind::flag;
    std::string place;  // "healthhook.toml:7", "HEALTHHOOK_LISTEN"; empty for a flag
  };
  // The keys the file, the environment or a flag set; the others keep their defaults.
  std::map<std::string, Origin> given;
};

}  // namespace hh::config
