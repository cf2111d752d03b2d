// The checks of the service's values that the commands rely on before and after a call
// (fetcher/calls/): the link code pattern, the team search pattern, connection recipes,
// lab report files, and the redaction of tokens from the service's reasons.
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sys/stat.h>

#include "fetcher/calls/bulk_connections.h"
#include "fetcher/calls/lab_reports.h"
#include "fetcher/calls/link_codes.h"
#include "fetcher/calls/org_teams.h"
#include "fetcher/calls/recipe_file.h"
#include "common/redaction.h"
#include "fetcher/calls/service_request.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(service_input_test)

using namespace hh;

BOOST_AUTO_TEST_CASE(link_codes_match_the_interfaces_pattern) {
  for (const char* code : {"pkus0123abcd", "skeu89abcdef", "pkeu00000000", "pkus0123abcdTRAILING"}) {
    BOOST_TEST_CONTEXT(code) { BOOST_TEST(fetcher::is_link_code(code)); }
  }
  for (const char* code : {"", "pkus0123abc", "xxus0123abcd", "pkca0123abcd", "pkus0123ABCD", "PKUS0123abcd",
                           "pkus0123abcg", " pkus0123abcd"}) {
    BOOST_TEST_CONTEXT(code) { BOOST_TEST(!fetcher::is_link_code(code)); }
  }
}

BOOST_AUTO_TEST_CASE(team_search_text_follows_the_interfaces_pattern) {
  for (const char* text : {"", "Acme", "Acme EU (prod) / team_1: 'x' | y & z-w", "Zürich Ünïcode ÀÖØöøÿ",
                           "O\xe2\x80\x99" "Brien", "tab\tand\u00a0nbsp"}) {
    BOOST_TEST_CONTEXT(text) { BOOST_TEST(fetcher::team_search_problem(text) == ""); }
  }
  BOOST_TEST(fetcher::team_search_problem(std::string(80, 'a')) == "");
  BOOST_TEST(fetcher::team_search_problem(std::string(40, 'a') + std::string(40, '\xc3')) == "not valid UTF-8");
  std::string eighty_umlauts;
  for (int i = 0; i < 80; ++i) eighty_umlauts += "\xc3\xbc";  // 80 characters, 160 bytes: allowed
  BOOST_TEST(fetcher::team_search_problem(eighty_umlauts) == "");
  BOOST_TEST(fetcher::team_search_problem(std::string(81, 'a')) == "81 characters, at most 80");
  BOOST_TEST(fetcher::team_search_problem("a%b").starts_with("character 2 is not allowed"));
  BOOST_TEST(fetcher::team_search_problem("a\"b") != "");
  BOOST_TEST(fetcher::team_search_problem("\xc3\x97") != "");  // U+00D7 × is outside the ranges
  BOOST_TEST(fetcher::team_search_problem("\xe2\x82\xac") != "");  // €
  BOOST_TEST(fetcher::team_search_problem("\xc3") == "not valid UTF-8");
  BOOST_TEST(fetcher::team_search_problem("\xc0\xaf") == "not valid UTF-8");  // overlong '/'
}

BOOST_AUTO_TEST_CASE(tokens_are_redacted_from_reasons_even_escaped_or_cut) {
  const std::vector<std::string> tokens = {"ya29.secret/token", "refresh-xyz"};
  constexpr TextEnd cut = TextEnd::cut_short;
  BOOST_TEST(redacted(R"({"input":"ya29.secret/token","other":"refresh-xyz"})", tokens) ==
             R"({"input":"[redacted]","other":"[redacted]"})");
  BOOST_TEST(redacted(R"({"input":"ya29.secret\/token"})", tokens) == R"({"input":"[redacted]"})");
  // Any JSON escape, in either case, mixed with plain characters.
  BOOST_TEST(redacted(R"({"input":"ya29\u002esecret\u002Ftoken"})", tokens) == R"({"input":"[redacted]"})");
  BOOST_TEST(redacted(R"({"input":"\u0079\u0061\u0032\u0039.secret\/token!"})", tokens) == R"({"input":"[redacted]!"})");
  // Non-ASCII characters escaped, one as a surrogate pair.
  const std::vector<std::string> utf8 = {"caf\xc3\xa9-\xf0\x9f\x94\x91-key"};
  BOOST_TEST(redacted(R"(x caf\u00e9-\ud83d\udd11-key y)", utf8) == "x [redacted] y");
  BOOST_TEST(redacted("x caf\xc3\xa9-\xf0\x9f\x94\x91-key y", utf8) == "x [redacted] y");
  // An excerpt that ends inside a token, also inside one of its escapes (a surrogate pair
  // cut anywhere).
  BOOST_TEST(redacted(R"({"input":"ya29.sec)", tokens, cut) == R"({"input":"[redacted])");
  BOOST_TEST(redacted(R"({"input":"ya29.secret\u00)", tokens, cut) == R"({"input":"[redacted])");
  BOOST_TEST(redacted(R"({"input":"ya29.secret\)", tokens, cut) == R"({"input":"[redacted])");
  // Percent-encoded (a service that quotes the request's URL), whole or cut inside an escape.
  BOOST_TEST(redacted("url ya29%2Esecret%2ftoken?x", tokens) == "url [redacted]?x");
  BOOST_TEST(redacted("url ya29.secret%2", tokens, cut) == "url [redacted]");
  BOOST_TEST(redacted("url ya29.secret%", tokens, cut) == "url [redacted]");
  for (const std::string end : {R"(\ud83d)", R"(\ud83d\)", R"(\ud83d\u)", R"(\ud83d\udd)", R"(\ud8)"}) {
    BOOST_TEST(redacted(R"(x caf\u00e9-)" + end, utf8, cut) == "x [redacted]", end);
  }
  // Text that ended where its answer did: a word that starts a secret is only a word.
  BOOST_TEST(redacted(R"({"input":"ya29.sec)", tokens) == R"({"input":"ya29.sec)");
  BOOST_TEST(redacted("Invalid token", std::vector<std::string>{"token=s3cr3t-t0ken&x=1"}) == "Invalid token");
  // Too short a start to be one, a start that goes on differently, a malformed escape: kept.
  BOOST_TEST(redacted("ends in ya2", tokens, cut) == "ends in ya2");
  BOOST_TEST(redacted("ya29.secret/tok3n", tokens) == "ya29.secret/tok3n");
  BOOST_TEST(redacted(R"(token ya29\q rest)", tokens, cut) == R"(token ya29\q rest)");
  BOOST_TEST(redacted("nothing secret", tokens) == "nothing secret");
  BOOST_TEST(redacted("nothing secret", std::vector<std::string>{""}) == "nothing secret");
  BOOST_TEST(redacted("", tokens, cut) == "");
  // A backslash in a secret matches as sent and as escaped, whole or cut.
  const std::vector<std::string> slashed = {"a\\nb-secret"};
  BOOST_TEST(redacted("x a\\nb-secret", slashed) == "x [redacted]");
  BOOST_TEST(redacted(R"(x a\\nb-secret)", slashed) == "x [redacted]");
  BOOST_TEST(redacted("x a\\nb-sec", slashed, cut) == "x [redacted]");
  // A secret that starts another, or overlaps it, in any order: nothing of either left.
  BOOST_TEST(redacted("T=abc123-refresh", std::vector<std::string>{"abc123", "abc123-refresh"}) == "T=[redacted]");
  BOOST_TEST(redacted("abcXYZdef!", std::vector<std::string>{"abcXYZ", "XYZdef"}) == "[redacted]!");
}

BOOST_AUTO_TEST_CASE(recipes_need_a_user_id_and_an_access_token_and_the_listed_types) {
  std::vector<std::string> tokens;
  auto ok = fetcher::check_recipe(R"({"user_id":"4a29dbc7-6db3-4c83-bfac-70a20a4be1b2","access_token":"a-1",)"
                                  R"("refresh_token":"r-1","provider_id":"p","expires_at":1718000000,)"
                                  R"("oauth_scopes":["sleep"],"future_member":{"kept":true}})",
                                  tokens);
  BOOST_TEST(ok.ok(), ok.error());
  BOOST_TEST(*ok == "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2");
  BOOST_TEST(tokens == (std::vector<std::string>{"a-1", "r-1"}));
  tokens.clear();
  BOOST_TEST(fetcher::check_recipe(R"({"user_id":"4a29dbc7-6db3-4c83-bfac-70a20a4be1b2","access_token":"a",)"
                                   R"("refresh_token":null,"provider_id":null,"expires_at":null,"oauth_scopes":null})",
                                   tokens)
                 .ok());
  const std::pair<const char*, const char*> refused[] = {
      {R"([1])", "not a JSON object"},
      {R"({"user_id":)", "not valid JSON"},
      {R"({"access_token":"secret-a"})", "user_id: missing or not a string"},
      {R"({"user_id":"u1","access_token":"secret-a"})", "user_id: not a UUID"},
      {R"({"user_id":"4a29dbc7-6db3-4c83-bfac-70a20a4be1b2"})", "access_token: missing, empty or not a string"},
      {R"({"user_id":"4a29dbc7-6db3-4c83-bfac-70a20a4be1b2","access_token":"secret-a","expires_at":"soon"})",
       "expires_at: not an integer or null"},
      {R"({"user_id":"4a29dbc7-6db3-4c83-bfac-70a20a4be1b2","access_token":"secret-a","refresh_token":5})",
       "refresh_token: not a string or null"},
      {R"({"user_id":"4a29dbc7-6db3-4c83-bfac-70a20a4be1b2","access_token":"secret-a","oauth_scopes":[1]})",
       "oauth_scopes: not an array of strings or null"},
  };
  for (const auto& [line, why] : refused) {
    BOOST_TEST_CONTEXT(line) {
      tokens.clear();
      auto checked = fetcher::check_recipe(line, tokens);
      BOOST_TEST(!checked.ok());
      BOOST_TEST(checked.error() == why);
      BOOST_TEST(checked.error().find("secret-a") == std::string::npos);
      BOOST_TEST(tokens.empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_recipes_file_is_written_0600_and_only_when_complete) {
  test::TempDir dir;
  const std::string path = dir.file("recipes.jsonl");
  {
    auto writer = fetcher::RecipeWriter::create(path);
    BOOST_REQUIRE(writer.ok());
    BOOST_TEST(writer->write(R"({"user_id":"x"})").ok());
    BOOST_TEST(!std::filesystem::exists(path));  // not before finish()
  }
  BOOST_TEST(!std::filesystem::exists(path));
  BOOST_TEST(!std::filesystem::exists(path + ".partial"));  // an unfinished file is removed

  dir.write("recipes.jsonl.partial", "left over\n");
  ::chmod((path + ".partial").c_str(), 0644);
  ::umask(0);
  auto writer = fetcher::RecipeWriter::create(path);
  ::umask(022);
  BOOST_REQUIRE(writer.ok());
  BOOST_TEST(writer->write(R"({"user_id":"x"})").ok());
  BOOST_TEST(writer->finish().ok());
  struct stat st {};
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 0777) == 0600u);
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(content == "{\"user_id\":\"x\"}\n");
  BOOST_TEST(!fetcher::RecipeWriter::create(dir.path().string()).ok());  // a folder
}

BOOST_AUTO_TEST_CASE(lab_report_files_are_known_by_their_first_bytes) {
  test::TempDir dir;
  const std::pair<std::string, std::string> formats[] = {
      {"%PDF-1.7\n...", "application/pdf"}, {"\xff\xd8\xff\xe0rest", "image/jpeg"}, {"\x89PNG\r\n\x1a\nrest", "image/png"}};
  for (const auto& [bytes, type] : formats) {
    auto file = fetcher::read_lab_report_file(dir.write("report with \"quotes\".bin", bytes));
    BOOST_REQUIRE_MESSAGE(file.ok(), file.error());
    BOOST_TEST(file->content_type == type);
    BOOST_TEST(file->bytes == bytes);
    BOOST_TEST(file->name == "report with _quotes_.bin");
  }
  auto text = fetcher::read_lab_report_file(dir.write("report.pdf", "just text, named .pdf"));
  BOOST_TEST(!text.ok());
  BOOST_TEST(text.error().ends_with("report.pdf: not a PDF, JPEG or PNG file (by its first bytes)"));
  std::string big = "%PDF-";
  big.resize(fetcher::kMaxLabReportBytes + 1, 'x');
  auto too_big = fetcher::read_lab_report_file(dir.write("big.pdf", big));
  BOOST_TEST(!too_big.ok());
  BOOST_TEST(too_big.error().find("over the service's limit of 10 MB") != std::string::npos, too_big.error());
  big.resize(fetcher::kMaxLabReportBytes);
  BOOST_TEST(fetcher::read_lab_report_file(dir.write("limit.pdf", big)).ok());
  BOOST_TEST(!fetcher::read_lab_report_file(dir.file("missing.pdf")).ok());

  fetcher::LabReportFile file{"r.pdf", "application/pdf", "%PDF-1"};
  BOOST_TEST(fetcher::lab_report_form(file, true, std::string_view("u-1"), "B") ==
             "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"r.pdf\"\r\n"
             "Content-Type: application/pdf\r\n\r\n%PDF-1\r\n"
             "--B\r\nContent-Disposition: form-data; name=\"user_id\"\r\n\r\nu-1\r\n"
             "--B\r\nContent-Disposition: form-data; name=\"needs_human_review\"\r\n\r\ntrue\r\n--B--\r\n");
}

BOOST_AUTO_TEST_CASE(bulk_providers_are_the_interfaces_list) {
  for (const char* provider : {"oura", "fitbit", "garmin", "whoop_v2", "my_fitness_pal_v2", "runkeeper"}) {
    BOOST_TEST(fetcher::is_bulk_provider(provider));
  }
  for (const char* provider : {"", "apple_health_kit", "whoop", "OURA", "health_connect"}) {
    BOOST_TEST(!fetcher::is_bulk_provider(provider));
  }
}

// Input echoed in an error is shown as typed when it is text ("１０００１" printed as
// fifteen '?'), control characters and bytes that are not UTF-8 as '?', cut between
// characters.
BOOST_AUTO_TEST_CASE(quoted_values_keep_text_and_hide_controls) {
  using hh::fetcher::quoted_value;
  BOOST_TEST(quoted_value("Z\xC3\xBCrich") == "\"Z\xC3\xBCrich\"");
  BOOST_TEST(quoted_value("\xEF\xBC\x91\xEF\xBC\x90") == "\"\xEF\xBC\x91\xEF\xBC\x90\"");
  BOOST_TEST(quoted_value("a\x01" "b\x7F") == "\"a?b?\"");
  BOOST_TEST(quoted_value("a\xC2\x9B" "31m") == "\"a?31m\"");  // C1 CSI
  BOOST_TEST(quoted_value("a\xFF" "b\xC3\xBC") == "\"a?b??\"");  // not UTF-8: every byte over 0x7F
  BOOST_TEST(quoted_value("ab\xC3\xBC" "cd", 3) == "\"ab...\"");    // not inside a character
  BOOST_TEST(quoted_value("abcd", 3) == "\"abc...\"");
}

BOOST_AUTO_TEST_SUITE_END()
