#include "config/forward_settings.h"

#include <algorithm>
#include <charconv>

#include "common/glob_problem.h"
#include "common/http_url.h"

namespace hh::config {
namespace {

ForwardKey forward_string(std::string name, std::string ForwardSettings::*member, std::string meaning,
                          std::string allowed = "") {
  return {{"forward[]." + name, "string", std::move(allowed), std::move(meaning), std::nullopt, false},
          [member](const ForwardSettings& f) { return toml_string(f.*member); },
          {}};
}

ForwardKey forward_integer(std::string name, int64_t ForwardSettings::*member, IntegerRange range,
                           std::string meaning) {
  return {{"forward[]." + name, "integer", "", std::move(meaning), range, false},
          [member](const ForwardSettings& f) { return std::to_string(f.*member); },
          [member](const ForwardSettings& f) { return f.*member; }};
}

ForwardKey forward_bool(std::string name, bool ForwardSettings::*member, std::string meaning) {
  return {{"forward[]." + name, "true/false", "", std::move(meaning), std::nullopt, false},
          [member](const ForwardSettings& f) { return std::string(f.*member ? "true" : "false"); },
          {}};
}

std::vector<ForwardKey> make_forward_keys() {
  return {
      forward_string("name", &ForwardSettings::name,
                     "Names the destination in the outbox, metrics, logs and `forward` commands; unique. Default: "
                     "the url without its query."),
      forward_string("url", &ForwardSettings::url, "Where the POSTs go (required).",
                     "https://…; http:// only to a loopback host unless allow_plain_http; no user information"),
      forward_string("secret_file", &ForwardSettings::secret_file,
                     "Secret file holding the whsec_… secret every POST is signed with (required)."),
      {{"forward[].events", "list of strings", "globs over event_type (\"daily.data.*\")",
        "Which deliveries are forwarded. Empty: every one.", std::nullopt, false},
       [](const ForwardSettings& f) { return toml_string_list(f.events); },
       {}},
      forward_string("mode", &ForwardSettings::mode,
                     "\"changes\": the derived rows each delivery changed; \"deliveries\": each delivery's body "
                     "byte-exact.",
                     "\"changes\" or \"deliveries\""),
      forward_integer("batch", &ForwardSettings::batch, {1, 1000}, "Changes per POST (changes mode)."),
      forward_bool("ordered", &ForwardSettings::ordered,
                   "One POST in flight per user and resource, in the order made. false: as lanes allow."),
      forward_integer("max_attempts", &ForwardSettings::max_attempts, {1, 1000},
                      "Attempts of a message before it is dead."),
      {{"forward[].max_age", "duration", "seconds, or \"3d\", \"12h\", \"30m\", \"45s\"",
        "A message older than this when an attempt fails is dead.", IntegerRange{60, 365 * 86400}, false},
       [](const ForwardSettings& f) { return duration_text(f.max_age_s); },
       [](const ForwardSettings& f) { return f.max_age_s; }},
      forward_integer("timeout_ms", &ForwardSettings::timeout_ms, {100, 600000},
                      "One deadline per POST: connecting, sending and the answer's status and headers."),
      forward_integer("concurrency", &ForwardSettings::concurrency, {1, 256},
                      "POSTs in flight to this destination (up to 64 more while some have gone unanswered for "
                      "a second: docs/forwarding.md)."),
      forward_integer("max_outbox_mib", &ForwardSettings::max_outbox_mib, {1, 1 << 20},
                      "Disk budget of everything its outbox keeps (waiting, dead, dropped ranges); past it the "
                      "oldest messages are dropped."),
      forward_integer("backoff_initial_ms", &ForwardSettings::backoff_initial_ms, {10, 3600000},
                      "First wait after a failed POST; doubles with each failure (with jitter)."),
      forward_integer("backoff_max_s", &ForwardSettings::backoff_max_s, {1, 86400},
                      "Longest wait between attempts (a Retry-After may ask for longer, up to a day)."),
      forward_bool("allow_plain_http", &ForwardSettings::allow_plain_http,
                   "Allow http:// to a host that is not loopback (a private network); logged as a warning."),
      forward_string("ca_file", &ForwardSettings::ca_file,
                     "CA certificates for the destination's TLS. Empty: the system trust store."),
  };
}

// One key of a block: sets its member from the TOML value, or says what is wrong.
Result<void> set_key(ForwardSettings& f, std::string_view key, const toml::node& value, const std::string& where) {
  auto text = [&](std::string& member) -> Result<void> {
    const auto* v = value.as_string();
    if (!v) return key_error(where, "expected a string");
    member = v->get();
    return {};
  };
  auto integer = [&](int64_t& member) -> Result<void> {
    const auto* v = value.as_integer();
    if (!v) return key_error(where, "expected an integer");
    member = v->get();
    return {};
  };
  auto boolean = [&](bool& member) -> Result<void> {
    const auto* v = value.as_boolean();
    if (!v) return key_error(where, "expected true or false");
    member = v->get();
    return {};
  };
  if (!find_forward_key(key)) return key_error(where, "unknown key");
  if (key == "name") return text(f.name);
  if (key == "url") return text(f.url);
  if (key == "secret_file") return text(f.secret_file);
  if (key == "mode") return text(f.mode);
  if (key == "ca_file") return text(f.ca_file);
  if (key == "batch") return integer(f.batch);
  if (key == "max_attempts") return integer(f.max_attempts);
  if (key == "timeout_ms") return integer(f.timeout_ms);
  if (key == "concurrency") return integer(f.concurrency);
  if (key == "max_outbox_mib") return integer(f.max_outbox_mib);
  if (key == "backoff_initial_ms") return integer(f.backoff_initial_ms);
  if (key == "backoff_max_s") return integer(f.backoff_max_s);
  if (key == "ordered") return boolean(f.ordered);
  if (key == "allow_plain_http") return boolean(f.allow_plain_http);
  if (key == "max_age") {
    if (const auto* seconds = value.as_integer()) {
      f.max_age_s = seconds->get();
      return {};
    }
    const auto* v = value.as_string();
    if (!v) return key_error(where, "expected a duration such as \"3d\", \"12h\", \"30m\" or seconds");
    auto parsed = parse_duration_s(v->get());
    if (!parsed) return key_error(where, parsed.error());
    f.max_age_s = *parsed;
    return {};
  }
  if (key == "events") {
    const auto* array = value.as_array();
    if (!array) return key_error(where, "expected an array of event type globs");
    f.events.clear();
    for (const auto& item : *array) {
      const auto* glob = item.as_string();
      if (!glob || glob->get().empty()) return key_error(where, "expected an array of event type globs");
      if (const std::string problem = glob_problem(glob->get()); !problem.empty()) {
        return key_error(where, "\"" + glob->get() + "\": " + problem);
      }
      f.events.push_back(glob->get());
    }
    return {};
  }
  return key_error(where, "unknown key");
}

bool is_loopback_host(std::string_view host) { return host == "127.0.0.1" || host == "::1" || host == "localhost"; }

// `text` with every copy of `url` in it redacted.
std::string without_url_secrets(std::string text, std::string_view url) {
  if (url.empty()) return text;
  const std::string safe = masked_url(url);
  for (size_t at = text.find(url); at != std::string::npos; at = text.find(url, at + safe.size())) {
    text.replace(at, url.size(), safe);
  }
  return text;
}

}  // namespace

const std::vector<ForwardKey>& forward_keys() {
  static const std::vector<ForwardKey> all = make_forward_keys();
  return all;
}

std::string_view block_key(const ForwardKey& key) {
  return std::string_view(key.doc.name).substr(sizeof "forward[]." - 1);
}

const ForwardKey* find_forward_key(std::string_view key) {
  for (const auto& entry : forward_keys()) {
    if (block_key(entry) == key) return &entry;
  }
  return nullptr;
}

Result<int64_t> parse_duration_s(std::string_view text) {
  int64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  const std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  const int64_t scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : 0;
  if (ec != std::errc{} || end == text.data() || scale == 0 || number < 0 || number > INT64_MAX / 86400) {
    return fail("expected a duration such as \"3d\", \"12h\", \"30m\" or \"45s\", got \"" + std::string(text) + "\"");
  }
  return number * scale;
}


Result<std::vector<ForwardSettings>> parse_forward_blocks(const toml::node& node) {
  const auto* array = node.as_array();
  if (!array) return fail("forward: expected [[forward]] tables");
  std::vector<ForwardSettings> forwards;
  for (size_t i = 0; i < array->size(); ++i) {
    const std::string where = "forward[" + std::to_string(i) + "]";
    const auto* table = (*array)[i].as_table();
    if (!table) return fail(where + ": expected a table with url and secret_file");
    ForwardSettings f;
    for (const auto& [key, value] : *table) {
      if (auto set = set_key(f, key.str(), value, where + "." + std::string(key.str())); !set) return fail(set);
    }
    if (f.name.empty()) {
      // The url without its query (which may hold a token: the name shows in logs, metrics
      // and the outbox).
      auto url = parse_http_url(f.url);
      f.name = url ? url->without_query() : masked_url(f.url);
    }
    forwards.push_back(std::move(f));
  }
  return forwards;
}

Result<void> validate_forwards(const std::vector<ForwardSettings>& forwards) {
  for (size_t i = 0; i < forwards.size(); ++i) {
    const ForwardSettings& f = forwards[i];
    const std::string where = "forward[" + std::to_string(i) + "]";
    if (f.url.empty()) return key_error(where + ".url", "required");
    if (f.secret_file.empty()) return key_error(where + ".secret_file", "required");
    // No message shows the URL's user information or query (masked_url()).
    auto url = parse_http_url(f.url);
    if (!url) return key_error(where + ".url", without_url_secrets(url.error(), f.url));
    if (url->has_userinfo || url->has_fragment) {
      return key_error(where + ".url",
                      "must not contain user information or a fragment, got \"" + masked_url(f.url) + "\"");
    }
    if (!url->tls && !f.allow_plain_http && !is_loopback_host(url->host)) {
      return key_error(where + ".url",
                      "plain http:// only to a loopback host; set allow_plain_http = true for a private network, "
                      "got \"" + masked_url(f.url) + "\"");
    }
    if (f.mode != "changes" && f.mode != "deliveries") {
      return key_error(where + ".mode", "must be \"changes\" or \"deliveries\", got \"" + f.mode + "\"");
    }
    for (const ForwardKey& key : forward_keys()) {  // integer ranges: the reference's
      if (!key.doc.range) continue;
      const std::string name = where + "." + std::string(block_key(key));
      if (auto in_range = check_range(key.doc, key.integer_value(f), name); !in_range) return in_range;
    }
    for (size_t j = 0; j < i; ++j) {
      if (forwards[j].name == f.name) {
        return key_error(where + ".name", "given twice: \"" + f.name + "\" (two blocks need different names)");
      }
    }
  }
  return {};
}

std::optional<std::string> forward_named(const std::vector<ForwardSettings>& forwards, std::string_view given) {
  for (const auto& f : forwards) {
    if (f.name == given) return f.name;
  }
  int64_t position = 0;
  const auto [end, ec] = std::from_chars(given.data(), given.data() + given.size(), position);
  if (ec == std::errc{} && end == given.data() + given.size() && position >= 1 &&
      position <= static_cast<int64_t>(forwards.size())) {
    return forwards[static_cast<size_t>(position - 1)].name;
  }
  return std::nullopt;
}

}  // namespace hh::config
