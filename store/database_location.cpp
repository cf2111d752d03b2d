#include "store/database_location.h"

#include <algorithm>
#include <array>
#include <filesystem>

namespace hh::store {
namespace {

// The scheme of a URI (RFC 3986 §3.1: a letter, then letters, digits, + - .), followed
// by "://"; empty when `text` is not such a URI.
std::string_view uri_scheme(std::string_view text) {
  const auto end = text.find("://");
  if (end == std::string_view::npos || end == 0) return {};
  const std::string_view scheme = text.substr(0, end);
  const auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!is_alpha(scheme[0])) return {};
  for (char c : scheme) {
    if (!is_alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return {};
  }
  return scheme;
}

constexpr std::string_view kMask = "***";

// libpq's keywords whose values are credentials (in a URI's query or a key/value string).
bool is_credential_key(std::string_view key) { return key == "password" || key == "sslpassword"; }

// %XX decoded, as libpq decodes every part of a URI (a malformed escape is kept as is:
// libpq refuses the URI then, and masking must not depend on it being well formed).
std::string percent_decoded(std::string_view text) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// A span of the text: [begin, end).
struct Span {
  size_t begin = 0, end = 0;
};

// The parts of a postgresql:// URI as libpq reads them
// (postgresql://[user[:password]@][hostspec][/dbname][?key=value&…]), positions in the
// whole text. libpq ends the user part at the first '@' or '/'; a password with an
// unescaped '@' or '/' (or '?') is cut there. Both readings are kept: the user part also
// ends at the last '@' before the query (the first '?' after the first '/'). Masking both
// may hide more than the password, never less.
struct UriParts {
  std::vector<Span> passwords;    // after the user's ':' up to an '@'
  bool libpq_password = false;    // libpq itself reads one (the user part up to the first '@')
  Span hosts;                     // host[:port][,host[:port]…]
  std::vector<std::pair<Span, Span>> parameters;  // keys and values of the query
};

UriParts uri_parts(std::string_view uri) {
  constexpr size_t npos = std::string_view::npos;
  UriParts parts;
  const size_t start = uri.find("://") + 3;
  const size_t slash = uri.find('/', start);
  const size_t query = slash != npos ? uri.find('?', slash) : uri.find('?', start);
  const size_t last_at = uri.rfind('@', query);
  const size_t first = uri.find_first_of("@/", start);
  const size_t libpq_at = first != npos && uri[first] == '@' ? first : npos;
  const size_t colon = uri.find(':', start);
  // And a third: a password with a raw '?' and '@' ends at the text's last '@'.
  const size_t very_last_at = uri.rfind('@');
  size_t host_begin = start;
  for (const size_t at : {libpq_at, last_at, very_last_at}) {
    if (at == npos || at < start) continue;
    if (colon != npos && colon < at) {
      parts.passwords.push_back(Span{colon + 1, at});
      parts.libpq_password = parts.libpq_password || at == libpq_at;
    }
    host_begin = std::max(host_begin, at + 1);
  }
  const size_t host_end = std::min(uri.find_first_of("/?", host_begin), uri.size());
  parts.hosts = Span{host_begin, host_end};
  // key=value pairs after each '?' or '&' (libpq's query starts at the first '?' after the
  // host spec; any '?' or '&' is taken here, so a stray one only hides more).
  for (size_t i = uri.find_first_of("?&", start); i != npos; i = uri.find_first_of("?&", i + 1)) {
    const size_t equals = uri.find('=', i + 1);
    const size_t next = std::min(uri.find_first_of("?&", i + 1), uri.size());
    if (equals == npos || equals > next) continue;
    const size_t value_end = std::min(uri.find('&', equals + 1), uri.size());
    parts.parameters.emplace_back(Span{i + 1, equals}, Span{equals + 1, value_end});
  }
  return parts;
}

std::string_view part(std::string_view text, Span span) { return text.substr(span.begin, span.end - span.begin); }

// The keywords libpq knows best; a string starting with one of them and '=' is a key/value
// connection string, not a file name.
constexpr std::array<std::string_view, 14> kLibpqKeywords = {
    "host",         "hostaddr", "port",        "dbname",      "user",    "password", "passfile",
    "sslmode",      "sslcert",  "sslkey",      "sslrootcert", "service", "options",  "sslpassword"};

// One `keyword = value` of a libpq key/value string (positions in the text).
struct KeyValue {
  Span key, value;
};

// Reads a key/value string as libpq's conninfo_parse does: keyword, '=', a value that is
// either single-quoted (backslash escapes) or runs to the next space. `unread`: where it
// could read no further (the caller masks the rest), else the text's size.
std::vector<KeyValue> key_values(std::string_view text, size_t& unread) {
  std::vector<KeyValue> pairs;
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  size_t i = 0;
  unread = text.size();
  for (;;) {
    while (i < text.size() && space(text[i])) ++i;
    if (i == text.size()) {
      unread = text.size();
      return pairs;
    }
    const size_t key_begin = i;
    while (i < text.size() && text[i] != '=' && !space(text[i])) ++i;
    const size_t key_end = i;
    while (i < text.size() && space(text[i])) ++i;
    if (i == text.size() || text[i] != '=' || key_end == key_begin) {
      unread = key_begin;
      return pairs;
    }
    ++i;
    while (i < text.size() && space(text[i])) ++i;
    const size_t value_begin = i;
    if (i < text.size() && text[i] == '\'') {
      ++i;
      while (i < text.size() && text[i] != '\'') i += text[i] == '\\' ? 2 : 1;
      if (i >= text.size()) {
        unread = key_begin;
        return pairs;
      }
      ++i;
    } else {
      while (i < text.size() && !space(text[i])) i += text[i] == '\\' ? 2 : 1;
      i = std::min(i, text.size());
    }
    pairs.push_back(KeyValue{Span{key_begin, key_end}, Span{value_begin, i}});
  }
}

bool is_key_value_string(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\n\r");
  if (i == std::string_view::npos) return false;
  const size_t end = text.find_first_of("= \t\n\r", i);
  if (end == std::string_view::npos) return false;
  const std::string_view key = text.substr(i, end - i);
  const size_t equals = text.find_first_not_of(" \t\n\r", end);
  if (equals == std::string_view::npos || text[equals] != '=') return false;
  return std::find(kLibpqKeywords.begin(), kLibpqKeywords.end(), key) != kLibpqKeywords.end();
}

// A key/value string's value as libpq reads it (quotes and backslashes undone).
std::string unquoted(std::string_view value) {
  if (!value.empty() && value.front() == '\'') value = value.substr(1, value.size() >= 2 ? value.size() - 2 : 0);
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) ++i;
    out.push_back(value[i]);
  }
  return out;
}

// Replaces the union of the spans with kMask (overlapping ones become one).
std::string masked(std::string_view text, std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::string out;
  size_t at = 0;
  for (const Span& span : spans) {
    if (span.begin < at) {
      at = std::max(at, span.end);  // overlaps the one just masked: mask on to its end
      continue;
    }
    out.append(text.substr(at, span.begin - at)).append(kMask);
    at = span.end;
  }
  return out.append(text.substr(std::min(at, text.size())));
}

bool is_loopback(std::string_view host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

}  // namespace

std::vector<std::string> files_of(std::string_view database) {
  auto kind = database_kind(database);
  if (!kind || *kind != DatabaseKind::sqlite_file) return {};
  // Named as given and, for a link, as the file it leads to (where SQLite keeps its files).
  std::vector<std::string> names{std::string(database)};
  std::error_code ec;
  const auto real = std::filesystem::weakly_canonical(std::filesystem::path(database), ec);
  if (!ec && real.string() != names.front()) names.push_back(real.string());
  std::vector<std::string> files;
  for (const std::string& file : names) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal", "-processor.lock"}) files.push_back(file + suffix);
  }
  return files;
}

Result<DatabaseKind> database_kind(std::string_view database) {
  const std::string_view scheme = uri_scheme(database);
  if (scheme.empty()) {
    if (is_key_value_string(database)) {
      return fail(ErrorKind::unavailable,
                  "database: a libpq key/value connection string (host=… dbname=…) is not accepted; write it as a "
                  "postgresql:// URI (docs/postgresql.md, \"Several instances on PostgreSQL\")");
    }
    return DatabaseKind::sqlite_file;
  }
  if (scheme == "postgresql" || scheme == "postgres") {
    // libpq ends the user part at the first '@': a second one is a password's or a
    // parameter's, which libpq would read as part of the host or the query, and quote
    // pieces of in its errors. The URI is not shown: it may hold the password.
    const std::string_view rest = database.substr(scheme.size() + 3);
    if (std::count(rest.begin(), rest.end(), '@') > 1) {
      return fail(ErrorKind::unavailable,
                  "database: the postgresql:// URI has more than one '@'; write an '@' in the password or in a "
                  "parameter as %40 (the URI is not shown: it may hold the password)");
    }
    return DatabaseKind::postgresql;
  }
  return fail(ErrorKind::unavailable, "database: unknown scheme \"" + std::string(scheme) +
              "://\" (expected a SQLite file path or a postgresql:// URI)");
}

std::string loggable_location(std::string_view database) {
  if (uri_scheme(database).empty()) {
    if (!is_key_value_string(database)) return std::string(database);
    size_t unread = 0;
    std::vector<Span> spans;
    for (const KeyValue& kv : key_values(database, unread)) {
      if (is_credential_key(part(database, kv.key))) spans.push_back(kv.value);
    }
    if (unread < database.size()) spans.push_back(Span{unread, database.size()});  // not readable: hidden
    return masked(database, spans);
  }
  const UriParts parts = uri_parts(database);
  std::vector<Span> spans = parts.passwords;
  for (const auto& [key, value] : parts.parameters) {
    if (is_credential_key(percent_decoded(part(database, key)))) spans.push_back(value);
  }
  return masked(database, spans);
}

std::vector<std::string> credentials_in(std::string_view database, std::string_view password) {
  std::vector<std::string> found;
  const auto add = [&](std::string_view text) {
    if (text.empty()) return;
    found.emplace_back(text);
    std::string decoded = percent_decoded(text);
    if (decoded != text) found.push_back(std::move(decoded));
  };
  add(password);
  if (uri_scheme(database).empty()) {
    if (!is_key_value_string(database)) return found;
    size_t unread = 0;
    for (const KeyValue& kv : key_values(database, unread)) {
      if (!is_credential_key(part(database, kv.key))) continue;
      add(part(database, kv.value));
      add(unquoted(part(database, kv.value)));
    }
    if (unread < database.size()) add(database.substr(unread));
    return found;
  }
  const UriParts parts = uri_parts(database);
  for (const Span& span : parts.passwords) add(part(database, span));
  for (const auto& [key, value] : parts.parameters) {
    if (is_credential_key(percent_decoded(part(database, key)))) add(part(database, value));
  }
  return found;
}

std::string redact_credentials(std::string text, const std::vector<std::string>& credentials) {
  // Quoted tokens first ("…" or '…' as libpq quotes what it cannot read): one that is part
  // of a credential goes whole, so a password libpq cut at an unescaped '/' does not show.
  for (const char quote : {'"', '\''}) {
    for (size_t open = text.find(quote); open != std::string::npos; open = text.find(quote, open + 1)) {
      const size_t close = text.find(quote, open + 1);
      if (close == std::string::npos) break;
      const std::string token = text.substr(open + 1, close - open - 1);
      const bool secret = token.size() >= 2 && std::any_of(credentials.begin(), credentials.end(), [&](const auto& c) {
                            return c.find(token) != std::string::npos;
                          });
      if (secret) {
        text.replace(open + 1, token.size(), kMask);
        open += kMask.size() + 1;
      } else {
        open = close;
      }
    }
  }
  for (const std::string& credential : credentials) {
    if (credential.size() < 3) continue;  // shorter ones would mask half the message
    for (size_t at = text.find(credential); at != std::string::npos; at = text.find(credential, at + kMask.size())) {
      text.replace(at, credential.size(), kMask);
    }
  }
  return text;
}

std::optional<std::string> plaintext_risk(std::string_view database, const char* pgsslmode, const char* pghost) {
  auto kind = database_kind(database);
  if (!kind || *kind != DatabaseKind::postgresql) return std::nullopt;
  const UriParts parts = uri_parts(database);
  std::optional<std::string> sslmode, host_parameter, hostaddr;
  for (const auto& [key, value] : parts.parameters) {
    const std::string name = percent_decoded(part(database, key));
    if (name == "sslmode") sslmode = percent_decoded(part(database, value));
    if (name == "host") host_parameter = percent_decoded(part(database, value));
    if (name == "hostaddr") hostaddr = percent_decoded(part(database, value));
  }
  const bool from_environment = !sslmode && pgsslmode != nullptr && *pgsslmode != '\0';
  if (from_environment) sslmode = pgsslmode;
  if (sslmode && *sslmode != "allow" && *sslmode != "prefer") return std::nullopt;

  // The hosts as libpq picks them: host=…, else the URI's host spec, else PGHOST, else the
  // default Unix socket; hostaddr=… is always TCP.
  std::vector<std::string> hosts;
  std::string spec = host_parameter ? *host_parameter : percent_decoded(part(database, parts.hosts));
  if (spec.empty() && pghost != nullptr) spec = pghost;
  for (size_t begin = 0; begin <= spec.size();) {
    const size_t comma = std::min(spec.find(',', begin), spec.size());
    std::string host = spec.substr(begin, comma - begin);
    if (!host_parameter) {
      // host:port, [v6]:port
      if (!host.empty() && host.front() == '[') {
        host = host.substr(1, host.find(']') - 1);
      } else if (host.find(':') != std::string::npos && host.find(':') == host.rfind(':')) {
        host = host.substr(0, host.find(':'));
      }
    }
    if (!host.empty()) hosts.push_back(host);
    begin = comma + 1;
  }
  if (hostaddr) hosts.push_back(*hostaddr);
  std::string tcp_host;
  for (const std::string& host : hosts) {
    const bool socket = host.front() == '/' || host.front() == '@';
    if (!socket && !is_loopback(host)) {
      tcp_host = host;
      break;
    }
  }
  if (tcp_host.empty()) return std::nullopt;
  const std::string why = sslmode ? "sslmode=" + *sslmode + (from_environment ? " (PGSSLMODE)" : "")
                                  : "no sslmode in the URI (libpq's default is prefer)";
  return "the connection to " + tcp_host + " may travel in plain text: with " + why +
         ", libpq falls back to an unencrypted connection, silently, when the server offers no TLS; add "
         "sslmode=verify-full to the URI (docs/postgresql.md, \"Several instances on PostgreSQL\")";
}

bool names_missing_file(const std::string& database) {
  auto kind = database_kind(database);
  if (!kind || *kind != DatabaseKind::sqlite_file) return false;
  std::error_code ec;
  return !std::filesystem::exists(database, ec);
}

Error no_backend(DatabaseKind kind) {
  const std::string_view name = kind == DatabaseKind::postgresql ? "PostgreSQL (postgresql://…)" : "SQLite";
  return fail(ErrorKind::unavailable, "database: this part of healthhook does not run on " + std::string(name) + " yet");
}

bool uri_holds_password(std::string_view database) {
  if (uri_scheme(database).empty()) return false;  // a file, or a key/value string (refused at start)
  const UriParts parts = uri_parts(database);
  // libpq's reading only: an '@' in the query or a path is no password.
  if (parts.libpq_password) return true;
  for (const auto& [key, value] : parts.parameters) {
    if (percent_decoded(part(database, key)) == "password") return true;
  }
  return false;
}

}  // namespace hh::store
