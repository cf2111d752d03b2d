#include "config/secrets.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

#include "common/base64.h"
#include "common/file_text.h"
#include "common/log.h"

namespace hh::config {

std::string resolve_secret_path(const std::string& path, const std::string& base_dir) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.is_absolute()) return path;
  if (const char* credentials = std::getenv("CREDENTIALS_DIRECTORY")) {
    const fs::path candidate = fs::path(credentials) / p;
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return resolve_config_path(path, base_dir);
}

std::string resolve_config_path(const std::string& path, const std::string& base_dir) {
  const std::filesystem::path p(path);
  return p.is_absolute() ? path : (std::filesystem::path(base_dir) / p).string();
}

namespace {

// A value given where a secret's file name belongs that looks like the secret itself
// (`signing_secret_files = ["whsec_…"]`): an error must not print it (to a terminal, or
// the journal). A path starting with '/' is a path. Otherwise a secret's prefix, a byte a
// file name rarely holds (base64's '+' and '=', a password's '@', '!'…), base64 of 16 bytes
// or more, or a word of 16 or more characters without '.' or '/' mixing upper case, lower
// case and digits (base64url, an API key) is taken for a secret; "healthhook-secret" or
// "keys/signing" is not.
bool looks_like_a_secret(std::string_view value) {
  if (value.starts_with("whsec_") || value.starts_with("sk_")) return true;
  bool upper = false, lower = false, digit = false, other = false;
  for (const char c : value) {
    const bool is_upper = c >= 'A' && c <= 'Z', is_lower = c >= 'a' && c <= 'z', is_digit = c >= '0' && c <= '9';
    other = other || (!is_upper && !is_lower && !is_digit && c != '.' && c != '_' && c != '-' && c != '/');
    upper = upper || is_upper;
    lower = lower || is_lower;
    digit = digit || is_digit;
  }
  const bool has_dot = value.find('.') != std::string_view::npos;
  const auto is_a_key = [&] {
    const auto key = base64_decode(value);
    return key && key->size() >= 16;
  };
  if (value.starts_with('/')) {
    // An absolute path, unless it is the base64 of a key (a random key's starts with '/' one
    // time in 64), which mixes cases and digits as a path seldom does.
    return upper && lower && digit && !has_dot && is_a_key();
  }
  if (other) return true;
  if (!has_dot && is_a_key()) return true;
  return value.size() >= 16 && value.find_first_of("./") == std::string_view::npos && upper && lower && digit;
}

// "whsec_<base64>" (or bare base64, as the signer takes it: receiver/signature) of a
// key that is not empty.
bool is_signing_secret(std::string_view secret) {
  if (secret.starts_with("whsec_")) secret.remove_prefix(6);
  const auto key = base64_decode(secret);
  return key && !key->empty();
}

// Bounded: a secret is a line, and a large file is no secret file.
constexpr size_t kSecretFileBytesRead = 64 * 1024;

// A secret file's first 64 KiB, read once (the path resolved), or why it cannot be read:
// what the secret and the checks on it (an API key's lines) both read.
struct SecretFileText {
  std::string resolved;
  FilePrefix prefix;
};

// Blank: spaces, tabs, CR, and the padding an editor or a tool may leave (NUL, form feed,
// vertical tab).
constexpr std::string_view kBlank{" \t\r\f\v\0", 6};

// Why a file could not be read, from open_regular_file's "PATH: cannot read: REASON"
// (strerror's words: "No such file or directory", "Permission denied", ...).
std::string unreadable_reason(const std::string& error) {
  static constexpr std::string_view kCannotRead = ": cannot read: ";
  const auto at = error.rfind(kCannotRead);
  return at == std::string::npos ? error : error.substr(at + kCannotRead.size());
}

// The error for a secret file that is not there or not readable. A name with a blank at
// either end is a slip in the list ("secret, secret2" from --set or the environment, a space
// inside the quotes): said, and the name shown quoted so that the blank shows, unless what
// is left looks like a secret itself (then only its place in the list, `entry`, is said).
Error unreadable_secret_file(const std::string& path, const std::string& resolved, const std::string& reason,
                             std::string_view entry) {
  const auto first = path.find_first_not_of(kBlank);
  const auto last = path.find_last_not_of(kBlank);
  const bool blank_at_an_end = first == std::string::npos || first != 0 || last != path.size() - 1;
  const std::string_view name =
      first == std::string::npos ? std::string_view() : std::string_view(path).substr(first, last - first + 1);
  const std::string which = entry.empty() ? std::string("the value given") : "the value given as " + std::string(entry);
  if (blank_at_an_end) {
    const std::string where = first == std::string::npos ? "is blank"
                              : first != 0 && last != path.size() - 1 ? "begins and ends with a blank"
                              : first != 0                           ? "begins with a blank"
                                                                     : "ends with a blank";
    if (looks_like_a_secret(name)) {
      return fail("cannot read secret file: " + which + " " + where +
                  " and, without it, looks like a secret itself, not the name of a file that holds one (not shown; "
                  "put the secret in a file, chmod 600, and give its path)");
    }
    return fail("cannot read secret file \"" + path + "\": the name " + where +
                ", which a file name seldom does (a space after a comma, or inside the quotes?): " + resolved + ": " +
                reason);
  }
  if (looks_like_a_secret(path)) {
    return fail("cannot read secret file: " + which +
                " looks like a secret itself, not the name of a file that holds one (not shown; put the secret in a "
                "file, chmod 600, and give its path)");
  }
  return fail("cannot read secret file " + resolved + ": " + reason);
}

// `entry`: where the name stands in a list of them ("signing_secret_files[1]"), for an error
// that cannot show the name; empty for a setting of one file.
Result<SecretFileText> read_secret_file_text(const std::string& path, const std::string& base_dir,
                                             std::string_view entry = {}) {
  SecretFileText file{resolve_secret_path(path, base_dir), {}};
  // A regular file only: a FIFO (or a device) would hold the reader until a writer comes;
  // at a SIGHUP that was every request's thread (the reload now reads off them as well).
  FileRefusal why = FileRefusal::unreadable;
  auto read = read_regular_file_prefix(file.resolved, kSecretFileBytesRead, &why);
  if (!read) {
    switch (why) {
      case FileRefusal::not_regular: return fail("secret file " + file.resolved + ": not a regular file");
      case FileRefusal::folder: return fail("cannot read secret file " + file.resolved + ": it is a folder");
      case FileRefusal::unreadable: break;
    }
    return unreadable_secret_file(path, file.resolved, unreadable_reason(read.error()), entry);
  }
  file.prefix = std::move(*read);
  return file;
}

bool is_blank(std::string_view line) { return line.find_first_not_of(kBlank) == std::string_view::npos; }

struct FileLine {
  std::string_view text;
  bool cut = false;  // the last line read, cut at the bound: the file goes on past it
};

// The lines of `prefix` that are not blank, in order.
std::vector<FileLine> lines_not_blank(const FilePrefix& prefix) {
  std::vector<FileLine> lines;
  std::string_view rest = prefix.text;
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    if (!is_blank(line)) lines.push_back({line, end == std::string_view::npos && !prefix.whole});
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  return lines;
}

std::string trimmed(std::string_view line) {
  const auto first = line.find_first_not_of(kBlank);
  const auto last = line.find_last_not_of(kBlank);
  return std::string(line.substr(first, last - first + 1));
}

// The secret: the first line that is not blank, trimmed (what follows it is the file's
// business, a comment say; each kind of file checks it as it needs).
Result<std::string> first_secret(const SecretFileText& file, const std::vector<FileLine>& lines) {
  if (!lines.empty() && !lines.front().cut) return trimmed(lines.front().text);
  if (!file.prefix.whole) return fail("secret file " + file.resolved + ": no secret within its first 64 KiB");
  return fail("secret file " + file.resolved + " is empty");
}

}  // namespace

Result<std::string> read_secret_file(const std::string& path, const std::string& base_dir) {
  auto file = read_secret_file_text(path, base_dir);
  if (!file) return fail(file);
  return first_secret(*file, lines_not_blank(file->prefix));
}

namespace {

// A secret others can read is a secret others may have: say so, but start (an operator
// may have reasons, e.g. a group the service shares with a deploy tool).
void warn_if_shared(const std::string& path, const std::string& base_dir) {
  const std::string resolved = resolve_secret_path(path, base_dir);
  struct stat info {};
  if (::stat(resolved.c_str(), &info) == 0 && S_ISREG(info.st_mode) && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    log::warn("secret_file_permissions")
        .str("file", resolved)
        .str("reason", "readable or writable by group or others; chmod 600 it");
  }
}

// A token that opens data on the listener (the read API, the console's read-only sign-in,
// /metrics): a short one can be guessed, refusal_delay_ms only slows each try. Said, not
// refused: a running setup keeps starting (the admin token, new with the console, is held
// to 16 characters).
void warn_if_short(const std::string& token, std::string_view setting) {
  constexpr size_t kShortToken = 16;
  if (token.size() >= kShortToken) return;
  log::warn("token_short")
      .str("setting", setting)
      .str("reason", "shorter than 16 characters: a client that reaches the listener may guess it; make one with "
                     "openssl rand -hex 32");
}

}  // namespace

namespace {

// A value sent or compared as a header value, alone on its one line: `what` ("the API key",
// "the token") names it in the errors, which never show it. A control byte would be sent raw
// or never match; a second line is a second value or a mistake, not something to drop
// silently (the first line used to be taken); a byte order mark an editor wrote would be part
// of the value, so the one the operator types never matches.
Result<std::string> read_one_line_value(const std::string& path, const std::string& base_dir, std::string_view what) {
  auto file = read_secret_file_text(path, base_dir);
  if (!file) return fail(file);
  const auto lines = lines_not_blank(file->prefix);
  auto value = first_secret(*file, lines);
  if (!value) return value;
  const std::string alone = "; the file holds " + std::string(what) + " alone, on one line";
  if (value->starts_with("\xEF\xBB\xBF")) {
    return fail(file->resolved + ": starts with a UTF-8 byte order mark; save it without one");
  }
  for (const char c : *value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      return fail(file->resolved + ": " + std::string(what) + " holds a control byte (0x" + kHex[byte >> 4] +
                  kHex[byte & 15] + ")" + alone);
    }
  }
  // After the value, comment lines (# …) are the file's business, as in a signing secret's
  // file: a note beside a working key must not stop serve at its next start.
  const bool only_comments_after = std::all_of(lines.begin() + 1, lines.end(), [](const FileLine& line) {
    return !line.cut && trimmed(line.text).starts_with('#');
  });
  if (!only_comments_after) {  // a line cut at the 64 KiB bound too
    return fail(file->resolved + ": more than one line that is not blank (nor a # comment)" + alone);
  }
  return value;
}

}  // namespace

Result<std::string> read_api_key_file(const std::string& path, const std::string& base_dir) {
  return read_one_line_value(path, base_dir, "the API key");
}

// A token rotated by appending the new one under the old kept the old in force and refused
// the new, without a word (a black-box attack); now the reload fails and says why.
Result<std::string> read_token_file(const std::string& path, const std::string& base_dir) {
  return read_one_line_value(path, base_dir, "the token");
}

Result<std::string> read_signing_secret_file(const std::string& path, const std::string& base_dir,
                                             std::string_view entry) {
  auto file = read_secret_file_text(path, base_dir, entry);
  if (!file) return fail(file);
  const auto lines = lines_not_blank(file->prefix);
  auto secret = first_secret(*file, lines);
  if (!secret) return secret;
  // Checked where the file is known (a verifier knows only the secrets' order): named as
  // read, which may be $CREDENTIALS_DIRECTORY's file of that name.
  if (!is_signing_secret(*secret)) {
    const bool bom = secret->starts_with("\xEF\xBB\xBF");
    return fail(file->resolved + (bom ? ": starts with a UTF-8 byte order mark; save it without one"
                                      : ": not a signing secret (whsec_<base64>, as the service shows it)"));
  }
  // A second signing secret appended to the first one's file (rotation done in one file) is
  // refused, not dropped: every delivery signed with it got 401 while check-config and serve
  // said nothing. Other lines (a comment) stay the file's business.
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string other = trimmed(lines[i].text);
    const auto key = base64_decode(other);
    if (other.starts_with("whsec_") || (key && key->size() >= 16)) {
      return fail(file->resolved +
                  ": holds a second signing secret; give each its own file and list both in signing_secret_files");
    }
  }
  return secret;
}

Result<Secrets> load_secrets(const Settings& settings) {
  for (const auto& file : settings.signing_secret_files) warn_if_shared(file, settings.base_dir);
  for (const std::string* file : {&settings.service.api_key_file, &settings.read_api.token_file,
                                  &settings.metrics.token_file, &settings.tls.key_file,
                                  &settings.console.admin_token_file}) {
    if (!file->empty()) warn_if_shared(*file, settings.base_dir);
  }
  Secrets secrets;
  for (size_t i = 0; i < settings.signing_secret_files.size(); ++i) {
    const std::string entry = "signing_secret_files[" + std::to_string(i) + "]";
    auto secret = read_signing_secret_file(settings.signing_secret_files[i], settings.base_dir, entry);
    if (!secret) return fail(secret, "signing_secret_files");
    secrets.signing_secrets.push_back(std::move(*secret));
  }
  if (!settings.service.api_key_file.empty()) {
    auto key = read_api_key_file(settings.service.api_key_file, settings.base_dir);
    if (!key) return fail(key, "service.api_key_file");
    secrets.api_key = std::move(*key);
  }
  for (size_t i = 0; i < settings.service.teams.size(); ++i) {
    const std::string& file = settings.service.teams[i].api_key_file;
    warn_if_shared(file, settings.base_dir);
    auto key = read_api_key_file(file, settings.base_dir);
    if (!key) return fail(key, "service.teams[" + std::to_string(i) + "].api_key_file");
    secrets.team_api_keys.push_back(std::move(*key));
  }
  for (size_t i = 0; i < settings.forwards.size(); ++i) {
    const std::string& file = settings.forwards[i].secret_file;
    warn_if_shared(file, settings.base_dir);
    auto secret = read_secret_file(file, settings.base_dir);
    const std::string where = "forward[" + std::to_string(i) + "].secret_file";
    if (!secret) return fail(secret, where);
    // Checked now, not when the first message is signed (the secret itself is never shown).
    // The prefix is required here (a signing secret may be the base64 alone, as the service
    // shows some): ours are made with it, and any short word is valid base64.
    if (!secret->starts_with("whsec_") && is_signing_secret(*secret)) {
      return fail(where + " " + file + ": not a whsec_ secret: put \"whsec_\" in front of it (the key stays the "
                  "same, and so does what the backend verifies with)");
    }
    if (!is_signing_secret(*secret)) {
      return fail(where + " " + file + ": not a whsec_ secret (\"whsec_\" and base64; make one with "
                  "echo \"whsec_$(head -c 32 /dev/urandom | base64)\")");
    }
    secrets.forward_secrets.push_back(std::move(*secret));
  }
  if (!settings.read_api.token_file.empty()) {
    auto token = read_token_file(settings.read_api.token_file, settings.base_dir);
    if (!token) return fail(token, "read_api.token_file");
    warn_if_short(*token, "read_api.token_file");
    secrets.read_api_token = std::move(*token);
  }
  if (!settings.database_password_file.empty()) {
    warn_if_shared(settings.database_password_file, settings.base_dir);
    auto password = read_secret_file(settings.database_password_file, settings.base_dir);
    if (!password) return fail(password, "database_password_file");
    secrets.database_password = std::move(*password);
  }
  if (!settings.metrics.token_file.empty()) {
    auto token = read_token_file(settings.metrics.token_file, settings.base_dir);
    if (!token) return fail(token, "metrics.token_file");
    warn_if_short(*token, "metrics.token_file");
    secrets.metrics_token = std::move(*token);
  }
  if (settings.console.enabled && !settings.console.admin_token_file.empty()) {
    auto token = read_token_file(settings.console.admin_token_file, settings.base_dir);
    if (!token) return fail(token, "console.admin_token_file");
    if (token->size() < 16) return fail("console.admin_token_file: the token is shorter than 16 characters");
    if (*token == secrets.read_api_token) {
      return fail("console.admin_token_file: the admin token must differ from the read API's token");
    }
    secrets.console_admin_token = std::move(*token);
  }
  return secrets;
}

}  // namespace hh::config
