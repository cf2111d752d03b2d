// Errors keep their kind (common/result.h): no source of the program passes a failure on as
// fail(x.error()) or fail("context: " + x.error()), which makes every kind `other` (a busy
// store would no longer answer 503 with Retry-After, a full disk would exit as a bug). A
// failure is passed on with fail(x) or fail(x, "context"), or given a kind of its own
// (fail(ErrorKind::busy, x.error())). This reads the sources as text: the compiler cannot
// tell a re-wrap from a new error.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

BOOST_AUTO_TEST_SUITE(error_kinds_test)

namespace {

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The end of the call whose '(' is at `open` (the matching ')'), skipping string and
// character literals; npos when unbalanced.
size_t call_end(std::string_view text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      if (c == '"' && i > 0 && text[i - 1] == 'R') {  // R"delim( … )delim"
        const size_t paren = text.find('(', i);
        if (paren == std::string_view::npos) return std::string_view::npos;
        const std::string closing = ")" + std::string(text.substr(i + 1, paren - i - 1)) + "\"";
        i = text.find(closing, paren);
        if (i == std::string_view::npos) return i;
        i += closing.size() - 1;
        continue;
      }
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// The bare re-wraps in `source`, as "line N: fail(…)".
std::vector<std::string> bare_rewraps(std::string_view source) {
  std::vector<std::string> found;
  for (size_t at = source.find("fail("); at != std::string_view::npos; at = source.find("fail(", at + 5)) {
    if (at > 0 && (is_word(source[at - 1]) || source[at - 1] == '.' || source[at - 1] == '>')) continue;
    const size_t end = call_end(source, at + 4);
    if (end == std::string_view::npos) continue;
    const std::string_view args = source.substr(at + 5, end - at - 5);
    const bool reads_message = args.find(".error()") != std::string_view::npos ||
                               args.find("->error()") != std::string_view::npos;
    const bool keeps_kind =
        args.find("error_kind()") != std::string_view::npos || args.find("ErrorKind::") != std::string_view::npos;
    if (!reads_message || keeps_kind) continue;
    const auto line = 1 + std::count(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    std::string call(source.substr(at, end - at + 1));
    for (char& c : call) c = c == '\n' ? ' ' : c;
    found.push_back("line " + std::to_string(line) + ": " + call);
  }
  return found;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(no_source_passes_a_failure_on_without_its_kind) {
  const std::filesystem::path root(HEALTHHOOK_SOURCE_DIR);
  std::vector<std::string> found;
  int files = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(root); it != std::filesystem::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.starts_with("build") || name.starts_with("."))) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string ext = it->path().extension().string();
    if (!it->is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    if (it->path().filename() == "error_kinds_test.cpp") continue;  // its examples
    ++files;
    for (const std::string& rewrap : bare_rewraps(read_file(it->path()))) {
      found.push_back(std::filesystem::relative(it->path(), root).string() + " " + rewrap);
    }
  }
  BOOST_TEST(files > 100);  // the tree was found
  std::string shown;
  for (const std::string& line : found) shown += "\n  " + line;
  BOOST_TEST(found.empty(), "bare re-wraps (pass the failure: fail(x) or fail(x, \"context\")):" << shown);
}

// The reader itself, on examples of each form.
BOOST_AUTO_TEST_CASE(the_reader_tells_a_bare_rewrap_from_a_kept_kind) {
  const std::string_view source =
      "if (!a) return fail(a.error());\n"
      "if (!b) return fail(\"opening \" + path + \": \" + b->error());\n"
      "if (!c) return fail(c);\n"
      "if (!d) return fail(d, \"reading\");\n"
      "if (!e) return fail(e);\n"
      "if (!f) return fail(ErrorKind::busy, f.error());\n"
      "if (!g) return fail(\"no ) here\" + std::string(g.value()));\n"
      "if (!h) return fail(std::string(R\"(a \"quoted\" ( paren)\") +\n    h.error());\n"
      "self.fail(x.error());\n";
  const std::vector<std::string> found = bare_rewraps(source);
  const std::vector<std::string> expected = {
      "line 1: fail(a.error())",
      "line 2: fail(\"opening \" + path + \": \" + b->error())",
      "line 8: fail(std::string(R\"(a \"quoted\" ( paren)\") +     h.error())"};
  BOOST_TEST(found == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
