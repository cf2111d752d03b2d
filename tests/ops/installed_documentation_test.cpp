// The documentation as the package installs it (cmake/Packaging.cmake, component
// "documentation", installed with `cmake --install` into a fresh prefix): every relative
// link of every installed page resolves to an installed file, and every path under
// /usr/share/doc/healthhook/ that a page or the unit names is installed. A page renamed on
// install (systemd/README.md was systemd.md) or a linked file left out broke links that
// the checks of the source tree (documentation_test) cannot see.
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using hh::test::TempDir;

namespace {

const fs::path kRepository = HEALTHHOOK_SOURCE_DIR;
const fs::path kBinaryDir = HEALTHHOOK_BINARY_DIR;
const fs::path kDocDir = HEALTHHOOK_INSTALL_DOCDIR;  // relative to the prefix: share/doc/healthhook

std::string page_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `cmake --install` of the documentation component into `prefix`; its exit status and output.
std::pair<int, std::string> install_documentation(const fs::path& prefix) {
  const std::string command = "'" HEALTHHOOK_CMAKE_COMMAND "' --install '" + kBinaryDir.string() + "' --prefix '" +
                              prefix.string() + "' --component documentation 2>&1";
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  BOOST_REQUIRE(pipe);
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, output};
}

// The installed documentation folder, installed once for the suite.
const fs::path& installed_docs() {
  static TempDir prefix;
  static const fs::path docs = [] {
    const auto [status, output] = install_documentation(prefix.path());
    BOOST_REQUIRE_MESSAGE(status == 0, "cmake --install failed: " << output);
    return prefix.path() / kDocDir;
  }();
  return docs;
}

std::vector<fs::path> installed_pages() {
  std::vector<fs::path> pages;
  for (const auto& entry : fs::recursive_directory_iterator(installed_docs())) {
    if (entry.is_regular_file() && entry.path().extension() == ".md") pages.push_back(entry.path());
  }
  return pages;
}

// `path` is `folder` or inside it (both canonical).
bool inside(const fs::path& path, const fs::path& folder) {
  const std::string p = path.string();
  const std::string f = folder.string();
  return p == f || (p.starts_with(f) && p[f.size()] == '/');
}

}  // namespace

BOOST_AUTO_TEST_SUITE(installed_documentation_test)

BOOST_AUTO_TEST_CASE(every_relative_link_of_an_installed_page_resolves_installed) {
  const fs::path root = fs::canonical(installed_docs());
  const std::vector<fs::path> pages = installed_pages();
  // The pages the package is known to carry: the README, the manual, the unit's page.
  for (const char* page : {"README.md", "docs/README.md", "docs/installing.md", "systemd/README.md"}) {
    BOOST_TEST(fs::exists(root / page), page << " is not installed");
  }
  BOOST_TEST(pages.size() > 100u);  // docs/ and its decision records

  // [text](target) and ![alt](target); a scheme (https:, mailto:, file:) or a bare #anchor
  // is not a file of the package.
  const std::regex link(R"(\]\(([^)\s]+)\))");
  const std::regex scheme(R"(^[a-zA-Z][a-zA-Z0-9+.-]*:)");
  size_t checked = 0;
  for (const fs::path& page : pages) {
    const std::string text = page_text(page);
    const std::string name = fs::relative(page, root).string();
    for (std::sregex_iterator it(text.begin(), text.end(), link), last; it != last; ++it) {
      const std::string target = (*it)[1].str().substr(0, (*it)[1].str().find('#'));
      if (target.empty() || std::regex_search(target, scheme)) continue;
      const fs::path resolved = fs::weakly_canonical(page.parent_path() / target);
      BOOST_TEST(fs::exists(resolved), name << ": link to " << target << " is not installed");
      BOOST_TEST(inside(resolved, root), name << ": link to " << target << " leaves the installed documentation");
      ++checked;
    }
  }
  BOOST_TEST(checked > 150u);  // 232 when written
}

// The paths the pages tell a reader to open or copy (`/usr/share/doc/healthhook/…`, as the
// .deb installs, or `<prefix>/share/doc/healthhook/…`), and the unit's Documentation=.
BOOST_AUTO_TEST_CASE(every_installed_path_the_pages_and_the_unit_name_is_installed) {
  const fs::path root = installed_docs();
  std::vector<std::pair<std::string, std::string>> texts;  // (name, text)
  for (const fs::path& page : installed_pages()) texts.emplace_back(fs::relative(page, root).string(), page_text(page));
  texts.emplace_back("systemd/healthhook.service", page_text(kRepository / "systemd" / "healthhook.service"));

  const std::regex named(R"((?:/usr|<prefix>)/share/doc/healthhook/([A-Za-z0-9_./*-]*))");
  size_t checked = 0;
  bool names_the_example = false;
  for (const auto& [name, text] : texts) {
    for (std::sregex_iterator it(text.begin(), text.end(), named), last; it != last; ++it) {
      std::string path = (*it)[1];
      while (path.ends_with('.') || path.ends_with(',')) path.pop_back();  // the sentence's, not the path's
      if (path.find('*') != std::string::npos) continue;                  // a pattern, not a file
      BOOST_TEST(fs::exists(root / path), name << " names /usr/share/doc/healthhook/" << path << ": not installed");
      names_the_example = names_the_example || path == "systemd/healthhook.toml";
      ++checked;
    }
  }
  BOOST_TEST(checked >= 5u);
  // installing.md copies the example configuration from where the package puts it.
  BOOST_TEST(names_the_example);
  BOOST_TEST(page_text(root / "systemd" / "healthhook.toml") == page_text(kRepository / "systemd" / "healthhook.toml"));
}

BOOST_AUTO_TEST_SUITE_END()
