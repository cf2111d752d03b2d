// `healthhook connections export|import` as processes against the fake service (issue
// 47): export pages with next_token into a 0600 JSON Lines file, import sends it back in
// batches (200 with the lists, 202 queued), the file is checked before anything is sent,
// and no OAuth token ever appears in the output or an error.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <sys/stat.h>

#include "fetcher/calls/bulk_connections.h"
#include "tests/service/service_fixture.h"

BOOST_AUTO_TEST_SUITE(connections_command_test)

using namespace hh;
using test::has;

namespace {

// Five users' Oura connections, each with its own tokens.
std::vector<std::string> oura_recipes() {
  std::vector<std::string> recipes;
  for (int i = 1; i <= 5; ++i) {
    const std::string n = std::to_string(i);
    recipes.push_back(R"({"user_id":"0000000)" + n + R"(-1111-4222-8333-44444444444)" + n +
                      R"(","access_token":"oura-access-secret-)" + n + R"(","refresh_token":"oura-refresh-secret-)" + n +
                      R"(","provider_id":"oura-user-)" + n + R"(","expires_at":171800000)" + n +
                      R"(,"oauth_scopes":["daily","heartrate"]})");
  }
  return recipes;
}

// oura_recipes() as an import file (one recipe a line) in `dir`; its path.
std::string recipes_file(const test::TempDir& dir) {
  std::string file;
  for (const auto& recipe : oura_recipes()) file += recipe + "\n";
  return dir.write("oura.jsonl", file);
}

std::string user_of(int i) {
  const std::string n = std::to_string(i);
  return "0000000" + n + "-1111-4222-8333-44444444444" + n;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// No token of oura_recipes() in `text`.
void no_tokens_in(const std::string& text) {
  BOOST_TEST(!has(text, "access-secret"), text);
  BOOST_TEST(!has(text, "refresh-secret"), text);
}

std::vector<fake::RecordedRequest> calls_to(const test::ServiceCommands& t, const std::string& path) {
  std::vector<fake::RecordedRequest> out;
  for (auto& request : t.calls()) {
    if (request.path == path) out.push_back(request);
  }
  return out;
}

// `recipe` with `user_id` written in upper case (the same user to the service).
std::string upper_user(std::string recipe, const std::string& user_id) {
  std::string upper = user_id;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  return recipe.replace(recipe.find(user_id), user_id.size(), upper);
}

}  // namespace

BOOST_AUTO_TEST_CASE(export_then_import_round_trips_the_recipes_without_showing_a_token) {
  test::ServiceCommands t;
  t.service.interface().set_connections("oura", oura_recipes(), 2);
  const std::string output = t.dir.file("oura.jsonl");
  auto result = t.run({"connections", "export", "--provider", "oura", "--output", output});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "{\"provider\":\"oura\",\"connections\":5,\"output\":\"" + output + "\"}\n");
  no_tokens_in(result.stdout_text + result.stderr_text);
  struct stat st {};
  BOOST_REQUIRE(::stat(output.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 0777) == 0600u);
  std::string expected;
  for (const auto& recipe : oura_recipes()) expected += recipe + "\n";
  BOOST_TEST(read_all(output) == expected);

  auto exports = calls_to(t, "/v2/link/bulk_export");
  BOOST_REQUIRE_EQUAL(exports.size(), 3u);  // pages of 2, 2 and 1
  BOOST_TEST(exports[0].method == "POST");
  BOOST_TEST(exports[0].content_type == "application/json");
  BOOST_TEST(exports[0].api_key == test::kCommandsApiKey);
  BOOST_TEST(exports[0].body == R"({"provider":"oura","user_ids":null,"next_token":null})");
  BOOST_TEST(exports[1].body == R"({"provider":"oura","user_ids":null,"next_token":"export-page-2"})");
  BOOST_TEST(exports[2].body == R"({"provider":"oura","user_ids":null,"next_token":"export-page-4"})");

  // Back in, in batches of two, waiting for completion.
  result = t.run({"connections", "import", "--provider", "oura", output, "--batch", "2", "--wait"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  no_tokens_in(result.stdout_text + result.stderr_text);
  BOOST_TEST(result.stdout_text ==
             "{\"batch\":1,\"connections\":2,\"status\":200,\"imported\":[\"" + user_of(1) + "\",\"" + user_of(2) +
                 "\"],\"failed\":[]}\n"
                 "{\"batch\":2,\"connections\":2,\"status\":200,\"imported\":[\"" + user_of(3) + "\",\"" + user_of(4) +
                 "\"],\"failed\":[]}\n"
                 "{\"batch\":3,\"connections\":1,\"status\":200,\"imported\":[\"" + user_of(5) + "\"],\"failed\":[]}\n"
                 "{\"total\":{\"provider\":\"oura\",\"batches\":3,\"connections\":5,\"imported\":[\"" + user_of(1) +
                 "\",\"" + user_of(2) + "\",\"" + user_of(3) + "\",\"" + user_of(4) + "\",\"" + user_of(5) +
                 "\"],\"failed\":[],\"unaccounted\":[],\"not_in_batch\":[],\"contradictory\":[],\"not_imported\":[],\"queued\":0}}\n");
  const auto imported = t.service.interface().imported_user_ids();
  BOOST_TEST(imported == (std::vector<std::string>{user_of(1), user_of(2), user_of(3), user_of(4), user_of(5)}));
  const auto imports = calls_to(t, "/v2/link/bulk_import");
  BOOST_REQUIRE_EQUAL(imports.size(), 3u);
  BOOST_TEST(imports[0].body == "{\"provider\":\"oura\",\"connections\":[" + oura_recipes()[0] + "," +
                                    oura_recipes()[1] + "],\"wait_for_completion\":true}");
  BOOST_TEST(imports[0].content_type == "application/json");
}

BOOST_AUTO_TEST_CASE(export_of_some_users_and_a_failed_export_leaves_no_file) {
  test::ServiceCommands t;
  t.service.interface().set_connections("oura", oura_recipes(), 2);
  t.dir.write("users.txt", "# the two to move\n" + user_of(2) + "\n\n" + user_of(5) + "\n");
  const std::string output = t.dir.file("some.jsonl");
  auto result = t.run({"connections", "export", "--provider", "oura", "--users", t.dir.file("users.txt"), "-o", output});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(read_all(output) == oura_recipes()[1] + "\n" + oura_recipes()[4] + "\n");
  BOOST_TEST(calls_to(t, "/v2/link/bulk_export").front().body ==
             "{\"provider\":\"oura\",\"user_ids\":[\"" + user_of(2) + "\",\"" + user_of(5) + "\"],\"next_token\":null}");

  // The second page fails: no file, no partial file, and the first page's tokens nowhere.
  fake::Fault none, broken;
  broken.kind = fake::Fault::Kind::status;
  broken.status = 500;
  // It quotes the first page's tokens (attack, stop 76: they were printed).
  broken.body = R"({"detail":"refresh failed for oura-access-secret-1 / oura-refresh-secret-2"})";
  t.service.inject("/v2/link/bulk_export", none);
  t.service.inject("/v2/link/bulk_export", broken);
  const std::string failed_output = t.dir.file("failed.jsonl");
  result = t.run({"connections", "export", "--provider", "oura", "-o", failed_output});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "HTTP 500"), result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "(no file written)"), result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "refresh failed for [redacted] / [redacted]"), result.stderr_text);
  no_tokens_in(result.stderr_text);
  // A recipes file given as --users by mistake: its lines are not quoted.
  result = t.run({"connections", "export", "--provider", "oura", "--users", output, "-o", failed_output});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, ":1: a line of "), result.stderr_text);
  no_tokens_in(result.stderr_text);
  BOOST_TEST(!std::filesystem::exists(failed_output));
  BOOST_TEST(!std::filesystem::exists(failed_output + ".partial"));
}

// A service whose pages never end (a new next_token on every page, none that came before) is
// followed for at most max_pages (10,000 in `connections export`, as a backfill; 5 here),
// then the export fails saying so. It had no useful bound (a million pages; black-box pass:
// 13,696 requests in 10 minutes).
BOOST_AUTO_TEST_CASE(an_export_whose_pages_never_end_stops_at_max_pages) {
  test::ServiceCommands t;
  t.service.interface().set_endless_pages(true);
  fetcher::ServiceAccess access;  // [service], as the command reads it from write_config()
  access.service.base_url = t.service.base_url();
  access.service.ca_file = "service-ca.pem";
  access.api_key = test::kCommandsApiKey;
  access.base_dir = t.dir.path().string();
  size_t written = 0;
  const auto exported = fetcher::export_connections(access, "oura", std::nullopt,
                                                    [&](std::string_view) -> Result<void> {
                                                      ++written;
                                                      return {};
                                                    },
                                                    5);
  BOOST_REQUIRE(!exported);
  BOOST_TEST((exported.error_kind() == ErrorKind::other));  // a failure: exit 1
  BOOST_TEST(has(exported.error(), "POST " + t.service.base_url() + "/v2/link/bulk_export: more than 5 pages, each "
                                   "with a new next_token: the service's pages never end"),
             exported.error());
  BOOST_TEST(calls_to(t, "/v2/link/bulk_export").size() == 5u);
  BOOST_TEST(calls_to(t, "/v2/link/bulk_export").back().body == R"({"provider":"oura","user_ids":null,"next_token":"tok4"})");
  BOOST_TEST(written == 0u);
}

// The same user on two pages (pages that overlap): import would refuse the file ("the same
// user is also on line 1"), and which recipe holds the live tokens cannot be told, so the
// export fails naming the user and both pages, and writes nothing. It wrote the file.
BOOST_AUTO_TEST_CASE(an_export_with_a_user_on_two_pages_fails_and_writes_nothing) {
  test::ServiceCommands t;
  const auto recipes = oura_recipes();
  t.service.interface().set_connections("oura", {recipes[0], recipes[1], recipes[0]}, 2);
  const std::string output = t.dir.file("twice.jsonl");
  const auto result = t.run({"connections", "export", "--provider", "oura", "-o", output});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(result.stdout_text == "");
  BOOST_TEST(has(result.stderr_text, "/v2/link/bulk_export: unexpected answer (page 2): data[0]: user \"" + user_of(1) +
                                     "\" is also on page 1 (import refuses a user twice; run the export again) (no file written)"),
             result.stderr_text);
  no_tokens_in(result.stderr_text);
  BOOST_TEST(!std::filesystem::exists(output));
  BOOST_TEST(!std::filesystem::exists(output + ".partial"));
  // The same user with its id in upper case is the same user (the service tells ids apart
  // regardless of case): it was exported twice, and import took the file.
  t.service.interface().set_connections("oura", {recipes[0], recipes[1], upper_user(recipes[0], user_of(1))}, 2);
  const auto cased = t.run({"connections", "export", "--provider", "oura", "-o", output});
  BOOST_TEST(cased.exit_code == 1);
  BOOST_TEST(has(cased.stderr_text, "\" is also on page 1 (import refuses a user twice"), cased.stderr_text);
  BOOST_TEST(!std::filesystem::exists(output));
}

BOOST_AUTO_TEST_CASE(import_reports_queued_and_failed_connections) {
  test::ServiceCommands t;
  const std::string path = recipes_file(t.dir);

  // Without --wait the service queues them (202, the interface does not show that body).
  auto result = t.run({"connections", "import", "--provider", "oura", path});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(has(result.stdout_text, "{\"batch\":1,\"connections\":5,\"status\":202,\"queued\":5}\n"), result.stdout_text);
  BOOST_TEST(has(result.stdout_text, "\"queued\":5}}\n"), result.stdout_text);
  BOOST_TEST(has(result.stderr_text, "note: 5 connection(s) are queued at the service (HTTP 202)"), result.stderr_text);
  BOOST_TEST(calls_to(t, "/v2/link/bulk_import").back().body.ends_with("],\"wait_for_completion\":false}"));

  // --wait, but the service takes longer than 20 s: 202 again.
  t.service.interface().set_import_slow(true);
  result = t.run({"connections", "import", "--provider", "oura", path, "--wait"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(has(result.stdout_text, "\"status\":202,\"queued\":5}"), result.stdout_text);
  t.service.interface().set_import_slow(false);

  // Two users the service cannot import: listed, and the exit status says so.
  t.service.interface().set_import_failures({user_of(2), user_of(4)});
  result = t.run({"connections", "import", "--provider", "oura", path, "--wait", "--batch", "3"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stdout_text, "{\"batch\":1,\"connections\":3,\"status\":200,\"imported\":[\"" + user_of(1) +
                                         "\",\"" + user_of(3) + "\"],\"failed\":[\"" + user_of(2) + "\"]}\n"),
             result.stdout_text);
  BOOST_TEST(has(result.stdout_text, "\"failed\":[\"" + user_of(2) + "\",\"" + user_of(4) + "\"],\"unaccounted\":[],\"not_in_batch\":[],\"contradictory\":[],\"not_imported\":[],\"queued\":0}}\n"),
             result.stdout_text);
  BOOST_TEST(has(result.stderr_text, "2 connection(s) were not imported"), result.stderr_text);
  no_tokens_in(result.stdout_text + result.stderr_text);

  // An answer that names a user neither way: not known to be imported, and said so (exit 0
  // before, black-box pass).
  t.service.interface().set_import_failures({});
  t.service.interface().set_import_unlisted({user_of(5)});
  result = t.run({"connections", "import", "--provider", "oura", path, "--wait"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stdout_text, "\"failed\":[],\"unaccounted\":[\"" + user_of(5) + "\"]}\n"), result.stdout_text);
  BOOST_TEST(has(result.stderr_text, "1 connection(s) the service's answer names neither imported nor failed"),
             result.stderr_text);

  // An answer that names as imported a user the batch did not hold: shown apart, not counted
  // as imported (it was, black-box pass).
  t.service.interface().set_import_unlisted({});
  const std::string stranger = "99999999-1111-4222-8333-444444444444";
  t.service.interface().set_import_strangers({stranger});
  result = t.run({"connections", "import", "--provider", "oura", path, "--wait"});
  BOOST_TEST(result.exit_code == 1);
  std::string batch_users;
  for (int i = 1; i <= 5; ++i) batch_users += (i > 1 ? "\",\"" : "\"") + user_of(i);
  BOOST_TEST(has(result.stdout_text, "{\"batch\":1,\"connections\":5,\"status\":200,\"imported\":[" + batch_users +
                                         "\"],\"failed\":[],\"not_in_batch\":[\"" + stranger + "\"]}\n"),
             result.stdout_text);
  BOOST_TEST(has(result.stdout_text, "\"imported\":[" + batch_users + "\"],\"failed\":[],\"unaccounted\":[],\"not_in_batch\":[\"" +
                                         stranger + "\"],\"contradictory\":[],\"not_imported\":[],\"queued\":0}}\n"),
             result.stdout_text);
  BOOST_TEST(has(result.stderr_text, "batch 1: the service named ids not in this batch: \"" + stranger + "\"\n"),
             result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "1 id(s) the service's answers named were not in their batch (see \"not_in_batch\")"),
             result.stderr_text);
}

// A batch that fails (503) stops the import: its users and those of the batches not sent
// were in no list of the total line, only stderr said so (black-box pass).
BOOST_AUTO_TEST_CASE(users_of_a_failed_batch_and_of_batches_not_sent_are_not_imported_in_the_total) {
  test::ServiceCommands t;
  const std::string path = recipes_file(t.dir);
  fake::Fault none, unavailable;
  unavailable.kind = fake::Fault::Kind::status;
  unavailable.status = 503;
  t.service.inject("/v2/link/bulk_import", none, 2);
  t.service.inject("/v2/link/bulk_import", unavailable, 10);
  auto result = t.run({"connections", "import", "--provider", "oura", path, "--wait", "--batch", "2"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stdout_text, "\"imported\":[\"" + user_of(1) + "\",\"" + user_of(2) + "\",\"" + user_of(3) + "\",\"" +
                                         user_of(4) + "\"],\"failed\":[],\"unaccounted\":[],\"not_in_batch\":[],"
                                         "\"contradictory\":[],\"not_imported\":[\"" + user_of(5) + "\"],\"queued\":0}}\n"),
             result.stdout_text);

  // The first batch fails: every user is not imported.
  t.service.clear_faults();
  t.service.inject("/v2/link/bulk_import", unavailable, 10);
  result = t.run({"connections", "import", "--provider", "oura", path, "--wait", "--batch", "2"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stdout_text, "\"batches\":1,\"connections\":5,\"imported\":[],\"failed\":[],\"unaccounted\":[],"
                                         "\"not_in_batch\":[],\"contradictory\":[],\"not_imported\":[\"" + user_of(1) + "\",\"" +
                                         user_of(2) + "\",\"" + user_of(3) + "\",\"" + user_of(4) + "\",\"" + user_of(5) + "\"]"),
             result.stdout_text);
}

// An answer that contradicts itself (a user both imported and failed, or imported twice)
// was taken as it came (black-box pass): such a user is counted neither way but shown as
// contradictory, with a warning, and the exit status says so.
BOOST_AUTO_TEST_CASE(a_user_the_answer_names_twice_is_contradictory) {
  test::ServiceCommands t;
  const std::string path = recipes_file(t.dir);
  t.service.interface().set_import_failures({user_of(2)});
  t.service.interface().set_import_strangers({user_of(2), user_of(4)});  // imported too: U2 both ways, U4 twice
  auto result = t.run({"connections", "import", "--provider", "oura", path, "--wait"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stdout_text, "{\"batch\":1,\"connections\":5,\"status\":200,\"imported\":[\"" + user_of(1) + "\",\"" +
                                         user_of(3) + "\",\"" + user_of(5) + "\"],\"failed\":[],\"contradictory\":[\"" +
                                         user_of(2) + "\",\"" + user_of(4) + "\"]}\n"),
             result.stdout_text);
  BOOST_TEST(has(result.stdout_text, "\"not_in_batch\":[],\"contradictory\":[\"" + user_of(2) + "\",\"" + user_of(4) +
                                         "\"],\"not_imported\":[],\"queued\":0}}\n"),
             result.stdout_text);
  BOOST_TEST(has(result.stderr_text, "batch 1: the service named ids more than once (imported and failed, or twice): \"" +
                                         user_of(2) + "\", \"" + user_of(4) + "\"\n"),
             result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "2 connection(s) the service's answer named more than once (see \"contradictory\")"),
             result.stderr_text);
}

BOOST_AUTO_TEST_CASE(a_refusal_that_echoes_a_token_is_shown_redacted) {
  test::ServiceCommands t;
  const std::string path = recipes_file(t.dir);
  // A validation error in the style of the service's framework: it quotes the input.
  fake::Fault refused;
  refused.kind = fake::Fault::Kind::status;
  refused.status = 422;
  refused.body = R"({"detail":[{"loc":["body","connections",0,"access_token"],"msg":"token not issued by the )"
                 R"(team's OAuth application","input":"oura-access-secret-1"},{"input":"oura-refresh-secret-1"}]})";
  t.service.inject("/v2/link/bulk_import", refused);
  const auto result = t.run({"connections", "import", "--provider", "oura", path, "--batch", "2"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(has(result.stderr_text, "batch 1 (lines of connections 1-2): POST " + t.service.base_url() +
                                         "/v2/link/bulk_import: HTTP 422: "),
             result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "\"input\":\"[redacted]\""), result.stderr_text);
  BOOST_TEST(has(result.stderr_text, "later batches not sent"), result.stderr_text);
  no_tokens_in(result.stdout_text + result.stderr_text);
  BOOST_TEST(calls_to(t, "/v2/link/bulk_import").size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_file_and_the_provider_are_checked_before_anything_is_sent) {
  test::ServiceCommands t;
  std::string good;
  for (const auto& recipe : oura_recipes()) good += recipe + "\n";
  const std::string path = t.dir.write("oura.jsonl", good + "\n");
  auto result = t.run({"connections", "import", "--provider", "oura", path, "--dry-run"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text == "{\"provider\":\"oura\",\"file\":\"" + path + "\",\"connections\":5,\"valid\":true}\n");
  // A byte order mark an editor put first is skipped, as replay skips it.
  const std::string with_bom = t.dir.write("bom.jsonl", "\xEF\xBB\xBF" + good);
  result = t.run({"connections", "import", "--provider", "oura", with_bom, "--dry-run"});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);

  const std::pair<std::string, std::string> bad_files[] = {
      {good + "{\"user_id\":\"" + user_of(6) + "\"}\n", ":6: access_token: missing, empty or not a string"},
      {good + R"({"user_id":"not-a-uuid","access_token":"oura-access-secret-9"})" "\n", ":6: user_id: not a UUID"},
      {good + oura_recipes()[2] + "\n", ":6: user_id: the same user is also on line 3"},
      {good + upper_user(oura_recipes()[2], user_of(3)) + "\n", ":6: user_id: the same user is also on line 3"},
      // A member twice: we would check the first user, a parser keeping the last imports another.
      {R"({"user_id":")" + user_of(1) + R"(","access_token":"oura-access-secret-1","user_id":")" + user_of(2) + "\"}\n",
       ":1: user_id: given twice"},
      {R"({"user_id":")" + user_of(1) + R"(","access_token":"oura-access-secret-1","expires_at":"tomorrow"})" "\n",
       ":1: expires_at: not an integer or null"},
      {"oura-access-secret-7 not json\n", ":1: not valid JSON"},
      {"\n\n", "no connection recipes"},
  };
  for (const auto& [content, reason] : bad_files) {
    BOOST_TEST_CONTEXT(reason) {
      const std::string bad = t.dir.write("bad.jsonl", content);
      for (const bool dry_run : {true, false}) {
        std::vector<std::string> args = {"connections", "import", "--provider", "oura", bad};
        if (dry_run) args.push_back("--dry-run");
        result = t.run(args);
        BOOST_TEST(result.exit_code == 2);
        BOOST_TEST(result.stdout_text == "");
        BOOST_TEST(has(result.stderr_text, reason), result.stderr_text);
        BOOST_TEST(test::line_count(result.stderr_text) == 1u);
        no_tokens_in(result.stderr_text);
        BOOST_TEST(!has(result.stderr_text, "secret-7"));
      }
    }
  }
  for (const char* provider : {"apple_health_kit", "whoop", ""}) {
    result = t.run({"connections", "import", "--provider", provider, path});
    BOOST_TEST(result.exit_code == 2);
    BOOST_TEST(has(result.stderr_text, "is not one the interface lists for bulk operations"), result.stderr_text);
    result = t.run({"connections", "export", "--provider", provider, "-o", t.dir.file("x.jsonl")});
    BOOST_TEST(result.exit_code == 2);
  }
  result = t.run({"connections", "import", "--provider", "oura", path, "--batch", "0"});
  BOOST_TEST(result.exit_code == 2);
  t.dir.write("users.txt", "not-a-user\n");
  result = t.run({"connections", "export", "--provider", "oura", "--users", t.dir.file("users.txt"), "-o", t.dir.file("x.jsonl")});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "users.txt:1: \"not-a-user\" is not a UUID"), result.stderr_text);
  // A file of one line that never ends (/dev/zero) is refused at a bound, not read until
  // memory runs out; a folder is called one.
  result = t.run({"connections", "import", "--provider", "oura", "/dev/zero"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "/dev/zero:1: longer than 1 MiB (one recipe a line)"), result.stderr_text);
  result = t.run({"connections", "export", "--provider", "oura", "--users", "/dev/zero", "-o", t.dir.file("x.jsonl")});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "--users: /dev/zero:1: longer than 64 KiB (one user id a line)"), result.stderr_text);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"connections", "import", "--provider", "oura", t.dir.path().string()},
        std::vector<std::string>{"connections", "export", "--provider", "oura", "--users", t.dir.path().string(), "-o",
                                 t.dir.file("x.jsonl")}}) {
    result = t.run(args);
    BOOST_TEST(result.exit_code == 2);
    BOOST_TEST(has(result.stderr_text, ": is a folder, not a file"), result.stderr_text);
  }
  // A file that is not there: named, with the reason, for both readers alike.
  result = t.run({"connections", "import", "--provider", "oura", t.dir.file("absent.jsonl")});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "absent.jsonl: cannot read: No such file or directory"), result.stderr_text);
  result = t.run({"connections", "export", "--provider", "oura", "--users", t.dir.file("absent.txt"), "-o",
                  t.dir.file("x.jsonl")});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(has(result.stderr_text, "--users: " + t.dir.file("absent.txt") + ": cannot read: No such file or directory"),
             result.stderr_text);
  BOOST_TEST(t.calls().empty());
  BOOST_TEST(!std::filesystem::exists(t.dir.file("x.jsonl")));
}

BOOST_AUTO_TEST_SUITE_END()
