#include "tests/support/examples.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hh::test {

std::string example_file(const std::string& name) {
  const std::string path = std::string(HEALTHHOOK_SCHEMAS_DIR) + "/examples/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read example " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace hh::test
