// Settings: TOML < HEALTHHOOK_* environment < flags; one-line errors naming the key;
// secrets only from files (spec §6).
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <map>

#include "config/load_settings.h"
#include "config/secrets.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(settings_test)

using namespace hh;
using hh::test::TempDir;

namespace {

std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

struct EnvFixture {
  EnvFixture() { g_env.clear(); }
  ~EnvFixture() { g_env.clear(); }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(settings, EnvFixture)

BOOST_AUTO_TEST_CASE(defaults_match_the_spec) {
  auto s = config::load_settings(std::nullopt, fake_env, {});
  BOOST_REQUIRE_MESSAGE(s.ok(), s.error());
  BOOST_TEST(s->listen == "127.0.0.1:8080");
  BOOST_TEST(s->database == "healthhook.db");
  BOOST_TEST(s->webhook_path == "/webhooks");
  BOOST_TEST(s->max_body_bytes == 4194304);
  BOOST_TEST(s->timestamp_tolerance_s == 300);
  BOOST_TEST(s->synchronous == "full");
  BOOST_TEST(s->cache_size_mib >= 64);
  BOOST_TEST(s->service.api_key_header == "x-vital-api-key");
}

BOOST_AUTO_TEST_CASE(file_then_environment_then_flags) {
  TempDir dir;
  const auto file = dir.write("h.toml", R"(
listen = "127.0.0.1:9000"
database = "from-file.db"
max_body_bytes = 2048
signing_secret_files = ["a", "b"]
[service]
base_url = "https://api.eu.example"
api_key_header = "x-brand-api-key"
[read_api]
token_file = "read-token"
)");
  g_env["HEALTHHOOK_DATABASE"] = "from-env.db";
  g_env["HEALTHHOOK_SERVICE_BASE_URL"] = "https://api.us.example";
  auto s = config::load_settings(file, fake_env, {{"listen", "127.0.0.1:9999"}});
  BOOST_REQUIRE_MESSAGE(s.ok(), s.error());
  BOOST_TEST(s->listen == "127.0.0.1:9999");               // flag beats file
  BOOST_TEST(s->database == "from-env.db");                // env beats file
  BOOST_TEST(s->max_body_bytes == 2048);                   // file beats default
  BOOST_TEST(s->signing_secret_files.size() == 2u);
  BOOST_TEST(s->service.base_url == "https://api.us.example");
  BOOST_TEST(s->service.api_key_header == "x-brand-api-key");
  BOOST_TEST(s->read_api.token_file == "read-token");
  BOOST_TEST(s->base_dir == dir.path().string());
}

// signing_secret_files from a flag or the environment as the file writes it, a TOML array:
// it was split at its commas, brackets and quotes kept as part of each file name.
BOOST_AUTO_TEST_CASE(secret_files_from_a_flag_or_variable_may_be_a_toml_array) {
  auto flagged = config::load_settings(std::nullopt, fake_env, {{"signing_secret_files", R"(["/x/a", "b,c"])"}});
  BOOST_REQUIRE_MESSAGE(flagged.ok(), flagged.error());
  BOOST_TEST(flagged->signing_secret_files == (std::vector<std::string>{"/x/a", "b,c"}), boost::test_tools::per_element());
  g_env["HEALTHHOOK_SIGNING_SECRET_FILES"] = R"( ["one"])";
  auto from_env = config::load_settings(std::nullopt, fake_env, {});
  BOOST_REQUIRE_MESSAGE(from_env.ok(), from_env.error());
  BOOST_TEST(from_env->signing_secret_files == (std::vector<std::string>{"one"}), boost::test_tools::per_element());
  // The comma-separated form as before.
  auto listed = config::load_settings(std::nullopt, nullptr, {{"signing_secret_files", "a,b"}});
  BOOST_REQUIRE_MESSAGE(listed.ok(), listed.error());
  BOOST_TEST(listed->signing_secret_files == (std::vector<std::string>{"a", "b"}), boost::test_tools::per_element());
  // Not an array of strings: said without the text, which may be a secret pasted in.
  for (const std::string text : {"[whsec_c2VjcmV0LW5vdC1zaG93bg==", "[1, 2]", "[\"a\"] trailing"}) {
    auto refused = config::load_settings(std::nullopt, nullptr, {{"signing_secret_files", text}});
    BOOST_REQUIRE(!refused.ok());
    BOOST_TEST(refused.error() == "signing_secret_files: expected an array of file names", text);
  }
}

BOOST_AUTO_TEST_CASE(errors_name_the_key) {
  TempDir dir;
  auto s = config::load_settings(dir.write("a.toml", "max_body_bytes = \"big\"\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("max_body_bytes") != std::string::npos);
  BOOST_TEST(s.error().find('\n') == std::string::npos);

  s = config::load_settings(dir.write("b.toml", "lisen = \"x\"\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("lisen: unknown key") != std::string::npos);

  // A key inside a list of tables, from --set: said as the list is (it was "unknown key").
  for (const std::string& inside : {std::string("forward[0].batch"), std::string("forward.batch"),
                                    std::string("service.teams[0].team_id")}) {
    s = config::load_settings(dir.write("e.toml", ""), fake_env, {{inside, "5"}});
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().find(": can only be set in the configuration file ([[") != std::string::npos, s.error());
  }

  s = config::load_settings(dir.write("c.toml", "[service]\nconcurrency = 0\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("service.concurrency") != std::string::npos);

  s = config::load_settings(dir.write("d.toml", "listen = \n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("d.toml:1") != std::string::npos);  // TOML syntax: file:line

  // A key's error names the file and the key's line: a wrong type, an unknown key, and a
  // value found out of range once every source is merged (unless a later source set it).
  s = config::load_settings(dir.write("e.toml", "listen = \"127.0.0.1:8080\"\n\nmax_body_bytes = \"big\"\n"),
                            fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("e.toml:3: max_body_bytes: expected an integer") != std::string::npos, s.error());
  s = config::load_settings(dir.write("f.toml", "\nretention = 5\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("f.toml:2: retention: expected a table ([retention])") != std::string::npos, s.error());
  s = config::load_settings(dir.write("f2.toml", "\nretention_days = 5\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("f2.toml:2: retention_days: unknown key") != std::string::npos, s.error());
  const std::string g = dir.write("g.toml", "listen = \"127.0.0.1:8080\"\n[service]\nconcurrency = 0\n");
  s = config::load_settings(g, fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("g.toml:3: service.concurrency: must be between 1 and 1024") != std::string::npos,
             s.error());
  // A key that needs another is named with its own line, the other being unset.
  s = config::load_settings(dir.write("t.toml", "[tls]\n\ncert_file = \"c.pem\"\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("t.toml:3: tls.cert_file: tls.cert_file and tls.key_file must be set together "
                            "(tls.key_file is not set)") != std::string::npos,
             s.error());
  s = config::load_settings(dir.write("m.toml", "[management]\nurl = \"https://m.example\"\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("m.toml:2: management.url: management.key_file is not set (required with "
                            "management.url)") != std::string::npos,
             s.error());
  // In the second [[forward]] block: that block's line, not the first's.
  s = config::load_settings(dir.write("k.toml", "[[forward]]\nurl = \"https://a.example/x\"\nsecret_file = \"s\"\n"
                                                "\n[[forward]]\nurl = 5\nsecret_file = \"s\"\n"),
                            fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("k.toml:6: forward[1].url: expected a string") != std::string::npos, s.error());
  s = config::load_settings(dir.write("l.toml", "listen = \"127.0.0.1:8080\"\n[[forward]]\n"
                                                "url = \"https://a.example/x\"\nsecret_file = \"s\"\n[[forward]]\n"
                                                "url = \"ftp://b\"\nsecret_file = \"s\"\n"),
                            fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("l.toml:6: forward[1].url:") != std::string::npos, s.error());
  // In a [[service.teams]] block: the key's own line too.
  s = config::load_settings(dir.write("m.toml", "[[service.teams]]\nteam_id = \"t1\"\n\nbase_url = 7\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("m.toml:4: service.teams[0].base_url: expected a string") != std::string::npos, s.error());
  // A header the API key could not be sent in, a webhook path no request line can name.
  s = config::load_settings(dir.write("n.toml", "[service]\n\napi_key_header = \"x api: key\"\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("n.toml:3: service.api_key_header: not a header name") != std::string::npos, s.error());
  BOOST_TEST(!config::load_settings(std::nullopt, fake_env, {{"service.api_key_header", ""}}).ok());
  // Host, framing and hop-by-hop headers, and those every request carries, in any case: the
  // key went out as the Host header (a proxy or the service read it as the host name).
  for (const char* header : {"Host", "content-length", "Transfer-Encoding", "Connection", "Accept-Encoding", "TE"}) {
    s = config::load_settings(std::nullopt, fake_env, {{"service.api_key_header", header}});
    BOOST_REQUIRE_MESSAGE(!s.ok(), header);
    BOOST_TEST(s.error().find("service.api_key_header") != std::string::npos, s.error());
    BOOST_TEST(s.error().find('\n') == std::string::npos, s.error());
  }
  BOOST_TEST(config::load_settings(std::nullopt, fake_env, {{"service.api_key_header", "Authorization"}}).ok());
  BOOST_TEST(config::load_settings(std::nullopt, fake_env, {{"service.api_key_header", "x-hostname"}}).ok());
  for (const char* path : {"/a?x=1", "/a b", "/a#b", "/web\thooks", "/w\x7f"}) {
    s = config::load_settings(std::nullopt, fake_env, {{"webhook_path", path}});
    BOOST_REQUIRE_MESSAGE(!s.ok(), path);
    BOOST_TEST(s.error().find("webhook_path: ") == 0u, s.error());
  }
  BOOST_TEST(config::load_settings(std::nullopt, fake_env, {{"webhook_path", "/hooks/vital-2_x.~"}}).ok());
  s = config::load_settings(std::nullopt, fake_env, {{"webhook_path", "/" + std::string(2 << 20, 'a')}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error() == "webhook_path: longer than 1024 bytes");
  BOOST_TEST(config::load_settings(std::nullopt, fake_env, {{"webhook_path", "/" + std::string(1023, 'a')}}).ok());

  s = config::load_settings(g, fake_env, {{"service.concurrency", "2000"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().starts_with("service.concurrency: must be between 1 and 1024, got 2000"), s.error());

  g_env["HEALTHHOOK_TIMESTAMP_TOLERANCE_S"] = "five";
  s = config::load_settings(std::nullopt, fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("HEALTHHOOK_TIMESTAMP_TOLERANCE_S") != std::string::npos);
  g_env.clear();
  // Out of range from the environment: the variable named too, not only the key.
  g_env["HEALTHHOOK_RETENTION_BODY_DAYS"] = "-7";
  s = config::load_settings(std::nullopt, fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().starts_with("HEALTHHOOK_RETENTION_BODY_DAYS (retention.body_days: "), s.error());
  // A flag set after it is what counts.
  s = config::load_settings(std::nullopt, fake_env, {{"retention.body_days", "-8"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().starts_with("retention.body_days: "), s.error());
  g_env.clear();

  // A port out of range or not a number (the resolver would wrap 99999 to 34463).
  for (const char* listen : {"127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1:8080x", "127.0.0.1:", "[::1]:http"}) {
    s = config::load_settings(std::nullopt, fake_env, {{"listen", listen}});
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().find("listen: the port must be a number from 0 to 65535") != std::string::npos, s.error());
  }
  for (const char* listen : {"127.0.0.1:65535", "[::1]:8080", ":8080", "127.0.0.1:0"}) {
    BOOST_TEST(config::load_settings(std::nullopt, fake_env, {{"listen", listen}}).ok(), listen);
  }

  s = config::load_settings(std::nullopt, fake_env, {{"synchronous", "off"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("synchronous") != std::string::npos);

  s = config::load_settings(std::nullopt, fake_env, {{"service.base_url", "http://api.example"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("service.base_url") != std::string::npos);
  // A region twice, as a TOML table refuses it; an entry that is no REGION=URL is shown
  // masked (a ',' in a password cuts the URL there).
  s = config::load_settings(std::nullopt, fake_env, {{"management.base_urls", "us=https://a.example,us=https://b.example"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error() == "management.base_urls: region \"us\" given twice", s.error());
  s = config::load_settings(std::nullopt, fake_env, {{"management.base_urls", "us=https://u:S3C,RET@host/x"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("RET") == std::string::npos, s.error());
  // The message shows where the credential or query was, never what it holds.
  for (const auto& [url, shown] : {std::pair{"https://user:pw@api.example", "\"https://***@api.example\""},
                                   std::pair{"https://api.example/?k=s3cret", "\"https://api.example/?***\""},
                                   std::pair{"https://api.example/#s3cret", "must not contain a fragment (#…)"}}) {
    s = config::load_settings(std::nullopt, fake_env, {{"service.base_url", url}});
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().find(shown) != std::string::npos, s.error());
    BOOST_TEST(s.error().find("s3cret") == std::string::npos, s.error());
    BOOST_TEST(s.error().find("pw@") == std::string::npos, s.error());
  }
}

// A TOML syntax error names the key of its line as other errors do, and a string written
// without quotes says so: toml++ says only where and what its parser expected ("t.toml:1:12:
// Error while parsing time: expected ':', saw '7'" for `listen = 127.0.0.1:80`).
BOOST_AUTO_TEST_CASE(a_toml_syntax_error_names_the_key_and_the_missing_quotes) {
  TempDir dir;
  auto error_of = [&](const std::string& toml) {
    const std::string file = dir.write("t.toml", toml);
    auto s = config::load_settings(file, fake_env, {});
    BOOST_REQUIRE_MESSAGE(!s.ok(), toml);
    BOOST_TEST(s.error().find('\n') == std::string::npos, s.error());
    const std::string error = s.error();
    BOOST_REQUIRE_MESSAGE(error.starts_with(file + ":"), error);
    return error.substr(file.size());  // ":LINE:COLUMN: …"
  };
  const std::string quotes = " (a string needs quotes: listen = \"…\")";
  std::string e = error_of("listen = 127.0.0.1:80\n");
  BOOST_TEST(e.starts_with(":1:12: listen: "), e);
  BOOST_TEST(e.ends_with(quotes), e);
  e = error_of("log_level = debug # loud\n");
  BOOST_TEST(e.starts_with(":1:13: log_level: "), e);
  BOOST_TEST(e.ends_with(" (a string needs quotes: log_level = \"…\")"), e);
  // In a table, and in the second [[forward]] block: the key as its other errors name it.
  e = error_of("listen = \"127.0.0.1:8080\"\n[service]\nbase_url = https://api.example\n");
  BOOST_TEST(e.starts_with(":3:12: service.base_url: "), e);
  BOOST_TEST(e.ends_with(" (a string needs quotes: base_url = \"…\")"), e);
  e = error_of("[[forward]]\nurl = \"https://a.example/x\"\nsecret_file = \"s\"\n\n[[forward]]\n"
               "url = https://b.example/x\n");
  BOOST_TEST(e.starts_with(":6:7: forward[1].url: "), e);
  BOOST_TEST(e.ends_with(" (a string needs quotes: url = \"…\")"), e);
  // Quoted, a number, a key that takes a number: the key, and no advice to quote.
  e = error_of("listen = \"127.0.0.1:80\n");
  BOOST_TEST(e.starts_with(":1:23: listen: "), e);
  BOOST_TEST(e.find("needs quotes") == std::string::npos, e);
  e = error_of("max_body_bytes = 10MB\n");
  BOOST_TEST(e.starts_with(":1:20: max_body_bytes: "), e);
  BOOST_TEST(e.find("needs quotes") == std::string::npos, e);
  e = error_of("listen = \n");
  BOOST_TEST(e.starts_with(":1:10: listen: "), e);
  BOOST_TEST(e.find("needs quotes") == std::string::npos, e);
  // A key set twice: the second one's line and column, and the key.
  e = error_of("listen = \"127.0.0.1:1\"\n\nlisten = \"127.0.0.1:2\"\n");
  BOOST_TEST(e.starts_with(":3:10: listen: "), e);
  BOOST_TEST(e.find("needs quotes") == std::string::npos, e);
  // A line that sets no key (a table header): toml++'s words after the place.
  e = error_of("[service\n");
  BOOST_TEST(e.starts_with(":1:9: Error while parsing table header"), e);
  // An array left open lines above is reported at the start of the next `key =`: that key
  // is not the fault, and is not named (review).
  e = error_of("signing_secret_files = [\n  \"a.txt\",\nlisten = \"127.0.0.1:8080\"\n");
  BOOST_TEST(e.starts_with(":3:1: "), e);
  BOOST_TEST(e.find("listen") == std::string::npos, e);
  // After a multi-line string, whose lines may look like table headers: no key named.
  e = error_of("[service]\napi_key_header = \"\"\"\n[[forward]]\n\"\"\"\nbase_url = https://api.example\n");
  BOOST_TEST(e.find("forward[0]") == std::string::npos, e);
}

BOOST_AUTO_TEST_CASE(console_keys) {
  TempDir dir;
  auto s = config::load_settings(dir.write("c.toml", "[read_api]\ntoken_file = \"r\"\n[console]\nenabled = true\n"
                                                     "admin_token_file = \"a\"\nsession_hours = 2\n"),
                                 fake_env, {});
  BOOST_REQUIRE_MESSAGE(s.ok(), s.error());
  BOOST_TEST(s->console.enabled);
  BOOST_TEST(s->console.admin_token_file == "a");
  BOOST_TEST(s->console.session_hours == 2);
  BOOST_TEST(!config::load_settings(std::nullopt, fake_env, {})->console.enabled);  // off by default
  // From the environment or a flag: true or false.
  g_env["HEALTHHOOK_CONSOLE_ENABLED"] = "yes";
  s = config::load_settings(std::nullopt, fake_env, {{"read_api.token_file", "r"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("expected true or false") != std::string::npos, s.error());
  g_env.clear();
  s = config::load_settings(dir.write("d.toml", "[console]\nenabled = 1\n"), fake_env, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("console.enabled") != std::string::npos);
  // The console reads through the read API and signs in with its token.
  s = config::load_settings(std::nullopt, fake_env, {{"console.enabled", "true"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("read_api.token_file") != std::string::npos, s.error());
  s = config::load_settings(std::nullopt, fake_env,
                            {{"console.enabled", "true"}, {"read_api.token_file", "r"}, {"webhook_path", "/console/x"}});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("webhook_path") != std::string::npos, s.error());
}

BOOST_AUTO_TEST_CASE(secret_files_resolve_relative_to_the_config_folder) {
  TempDir dir;
  dir.write("secret", "  whsec_abc=\n");
  dir.write("token", "tok\n");
  const auto file = dir.write("h.toml", "signing_secret_files = [\"secret\"]\n[read_api]\ntoken_file = \"token\"\n");
  auto s = config::load_settings(file, fake_env, {});
  BOOST_REQUIRE(s.ok());
  ::unsetenv("CREDENTIALS_DIRECTORY");
  auto secrets = config::load_secrets(*s);
  BOOST_REQUIRE_MESSAGE(secrets.ok(), secrets.error());
  BOOST_TEST(secrets->signing_secrets.at(0) == "whsec_abc=");
  BOOST_TEST(secrets->read_api_token == "tok");
  BOOST_TEST(secrets->api_key.empty());
}

BOOST_AUTO_TEST_CASE(systemd_credentials_directory_wins_for_relative_names) {
  TempDir config_dir, credentials;
  config_dir.write("secret", "whsec_Y29uZmln\n");
  credentials.write("secret", "whsec_Y3JlZGVudGlhbHM=\n");
  auto s = config::load_settings(config_dir.write("h.toml", ""), fake_env, {});
  BOOST_REQUIRE(s.ok());
  ::setenv("CREDENTIALS_DIRECTORY", credentials.path().c_str(), 1);
  auto secrets = config::load_secrets(*s);
  ::unsetenv("CREDENTIALS_DIRECTORY");
  BOOST_REQUIRE(secrets.ok());
  BOOST_TEST(secrets->signing_secrets.at(0) == "whsec_Y3JlZGVudGlhbHM=");
}

BOOST_AUTO_TEST_CASE(missing_or_empty_secret_files_are_errors_naming_the_file) {
  TempDir dir;
  dir.write("empty", "\n");
  auto s = config::load_settings(dir.write("h.toml", "signing_secret_files = [\"nope\"]\n"), fake_env, {});
  BOOST_REQUIRE(s.ok());
  auto secrets = config::load_secrets(*s);
  BOOST_REQUIRE(!secrets.ok());
  BOOST_TEST(secrets.error().find("nope") != std::string::npos);

  s = config::load_settings(dir.write("h2.toml", "signing_secret_files = [\"empty\"]\n"), fake_env, {});
  secrets = config::load_secrets(*s);
  BOOST_REQUIRE(!secrets.ok());
  BOOST_TEST(secrets.error().find("empty") != std::string::npos);
  // What is in it is wrong: the file is named (it said "secret 1"), a byte order mark too.
  dir.write("typo", "whsec_not base64!\n");
  s = config::load_settings(dir.write("h3.toml", "signing_secret_files = [\"empty\", \"typo\"]\n"), fake_env, {});
  dir.write("empty", "whsec_Y29uZmln\n");
  secrets = config::load_secrets(*s);
  BOOST_REQUIRE(!secrets.ok());
  BOOST_TEST(secrets.error() == "signing_secret_files: " + dir.file("typo") +
                                    ": not a signing secret (whsec_<base64>, as the service shows it)",
             secrets.error());
  dir.write("typo", "\xEF\xBB\xBFwhsec_Y29uZmln\n");
  secrets = config::load_secrets(*s);
  BOOST_REQUIRE(!secrets.ok());
  BOOST_TEST(secrets.error().find("typo: starts with a UTF-8 byte order mark") != std::string::npos, secrets.error());
  // The first line that is not blank is the secret (an editor's blank line first).
  dir.write("typo", "\n  \nwhsec_Y29uZmln\n");
  secrets = config::load_secrets(*s);
  BOOST_TEST(secrets.ok(), (secrets.ok() ? "" : secrets.error()));
  // A second secret appended to the file (a rotation done in one file) is refused, not
  // dropped: deliveries signed with it got 401 while check-config and serve said nothing.
  dir.write("typo", "whsec_Y29uZmln\nwhsec_b3RoZXI=\n");
  secrets = config::load_secrets(*s);
  BOOST_REQUIRE(!secrets.ok());
  BOOST_TEST(secrets.error() == "signing_secret_files: " + dir.file("typo") +
                                    ": holds a second signing secret; give each its own file and list both in "
                                    "signing_secret_files",
             secrets.error());
  // So is one past the 64 KiB mark, cut there.
  dir.write("typo", "whsec_Y29uZmln\n" + std::string(65536 - 25, '\n') + "whsec_b3RoZXI=\n");
  secrets = config::load_secrets(*s);
  BOOST_TEST(!secrets.ok());
  // A comment after the secret, and padding (NUL, form feed), are the file's business.
  dir.write("typo", std::string("whsec_Y29uZmln\n# rotated 2026-01-01\n\f\n") + std::string(4, '\0') + "\n");
  secrets = config::load_secrets(*s);
  BOOST_TEST(secrets.ok(), (secrets.ok() ? "" : secrets.error()));
  // A secret that ends at the 64 KiB mark, with no newline, is whole.
  dir.write("typo", std::string(65536 - 14, '\n') + "whsec_Y29uZmln");
  secrets = config::load_secrets(*s);
  BOOST_TEST(secrets.ok(), (secrets.ok() ? "" : secrets.error()));
  // A file without a line in its first 64 KiB is read no further.
  dir.write("large", std::string(70000, 'x'));
  auto endless = config::read_secret_file("large", dir.path().string());
  BOOST_REQUIRE(!endless.ok());
  BOOST_TEST(endless.error() == "secret file " + dir.file("large") + ": no secret within its first 64 KiB",
             endless.error());
  // A device is refused unread (/dev/zero never ends).
  auto device = config::read_secret_file("/dev/zero", dir.path().string());
  BOOST_REQUIRE(!device.ok());
  BOOST_TEST(device.error() == "secret file /dev/zero: not a regular file", device.error());
  // A configuration too.
  auto settings = config::load_settings(std::string("/dev/zero"), fake_env, {});
  BOOST_REQUIRE(!settings.ok());
  BOOST_TEST(settings.error() == "/dev/zero: larger than 4 MiB", settings.error());
}

// An API key file holds the key alone on one line: a control byte was sent raw in the
// header, and a second line was silently dropped (the first one used). Each is a one-line
// error naming the setting and the file, never the key; blank lines and a CRLF end are fine.
BOOST_AUTO_TEST_CASE(an_api_key_file_with_a_control_byte_or_two_lines_is_refused) {
  TempDir dir;
  dir.write("secret", "whsec_Y29uZmln\n");
  dir.write("team-key", "sk_team\n");
  const std::string toml = "[service]\napi_key_file = \"key\"\n[[service.teams]]\n"
                           "team_id = \"6b74423d-0504-4470-9afb-477252ccf67a\"\n"
                           "base_url = \"https://eu.example\"\napi_key_file = \"team-key\"\n";
  auto s = config::load_settings(dir.write("h.toml", toml), fake_env, {});
  BOOST_REQUIRE_MESSAGE(s.ok(), s.error());
  ::unsetenv("CREDENTIALS_DIRECTORY");
  dir.write("key", "\n  sk_live_abc\r\n\n");
  auto secrets = config::load_secrets(*s);
  BOOST_REQUIRE_MESSAGE(secrets.ok(), secrets.error());
  BOOST_TEST(secrets->api_key == "sk_live_abc");
  for (const std::string& content : {std::string("sk_live\x01" "abc\n"), std::string("sk_live\tabc\n"),
                                     std::string("sk_live_abc\nsk_live_def\n"), std::string("sk_live_abc\n\n x\n")}) {
    dir.write("key", content);
    secrets = config::load_secrets(*s);
    BOOST_REQUIRE(!secrets.ok());
    BOOST_TEST(secrets.error().starts_with("service.api_key_file: " + dir.file("key") + ": "), secrets.error());
    BOOST_TEST(secrets.error().find('\n') == std::string::npos, secrets.error());
    BOOST_TEST(secrets.error().find("sk_live") == std::string::npos, secrets.error());
  }
  dir.write("key", "sk_live_abc\n");
  dir.write("team-key", "sk_team\nsk_other\n");
  secrets = config::load_secrets(*s);
  BOOST_REQUIRE(!secrets.ok());
  BOOST_TEST(secrets.error().starts_with("service.teams[0].api_key_file: "), secrets.error());
}

// sign and replay --secret-file check the secret as serve does, naming the file given.
BOOST_AUTO_TEST_CASE(sign_and_replay_name_the_secret_file_that_is_wrong) {
  TempDir dir;
  const std::string named = dir.write("named-secret", "\xEF\xBB\xBFwhsec_Y29uZmln\n");
  auto signed_ = hh::test::run_healthhook({"sign", "--secret-file", named}, "{}");
  BOOST_TEST(signed_.exit_code == 2);
  BOOST_TEST(signed_.stderr_text.find(named + ": starts with a UTF-8 byte order mark") != std::string::npos,
             signed_.stderr_text);
  dir.write("typo", "whsec_not base64!\n");
  dir.write("capture.jsonl", "");
  auto replayed = hh::test::run_healthhook({"replay", dir.file("capture.jsonl"), "--to", "http://127.0.0.1:9/webhooks",
                                  "--secret-file", dir.file("typo")});
  BOOST_TEST(replayed.exit_code == 2);
  BOOST_TEST(replayed.stderr_text.find(dir.file("typo") + ": not a signing secret") != std::string::npos,
             replayed.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // settings_test
