#pragma once
// Secrets come from files (or systemd credentials), never from argv or the environment.
// A relative path is looked up first in $CREDENTIALS_DIRECTORY (systemd LoadCredential=),
// then relative to the config file's folder. Files are read once at start-up and again on
// SIGHUP; a missing or unreadable file is a start-up error naming the file and why ("No
// such file or directory", "Permission denied"), and a blank at either end of its name.
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "config/settings.h"

namespace hh::config {

struct Secrets {
  std::vector<std::string> signing_secrets;  // "whsec_…" strings, as written in the files
  std::string api_key;                       // empty when service.api_key_file is unset
  std::vector<std::string> team_api_keys;    // one per service.teams entry, in that order
  std::vector<std::string> forward_secrets;  // "whsec_…", one per [[forward]] block, in that order
  std::string read_api_token;                // empty: read API disabled
  std::string metrics_token;                 // empty: GET /metrics needs no token
  std::string console_admin_token;           // empty: no admin sign-in to the console
  std::string database_password;             // empty: database_password_file unset
};

Result<Secrets> load_secrets(const Settings& settings);

// Reads one secret file: its first line that is not blank, surrounding whitespace trimmed
// (what follows is the file's business). A file with none, or whose lines run past 64 KiB
// before one, is an error naming the file; one that is not a regular file (a FIFO,
// /dev/zero) is refused unread.
Result<std::string> read_secret_file(const std::string& path, const std::string& base_dir);

// The same for an API key, which goes out as a header value: one line that is not blank
// (a second is an error, a # comment after it is not), no byte order mark, no control byte;
// the key is never shown.
Result<std::string> read_api_key_file(const std::string& path, const std::string& base_dir);

// The same rules for a bearer token ([read_api], [metrics] and the console's admin token).
Result<std::string> read_token_file(const std::string& path, const std::string& base_dir);

// The same for a webhook signing secret, checked: "whsec_<base64>" (or bare base64, as the
// service's libraries take it); the error names the file as read and says what is wrong
// (a UTF-8 byte order mark, the wrong form). `entry` names its place in the list
// ("signing_secret_files[1]") for an error that cannot show the name (one like a secret).
Result<std::string> read_signing_secret_file(const std::string& path, const std::string& base_dir,
                                             std::string_view entry = {});

// The path a secret file name resolves to (see above).
std::string resolve_secret_path(const std::string& path, const std::string& base_dir);

// A file a setting names that is no secret (service.ca_file): relative to the
// configuration's folder, `base_dir`.
std::string resolve_config_path(const std::string& path, const std::string& base_dir);

}  // namespace hh::config
