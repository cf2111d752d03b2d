#include "tests/support/temp_dir.h"

#include <openssl/rand.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/base64.h"

namespace hh::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/healthhook-test-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  const std::string full = file(name);
  {
    std::ofstream out(full, std::ios::binary);
    out << content;
  }
  // Readable by its owner only, as a user keeps secrets (serve warns about others).
  std::filesystem::permissions(full, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return full;
}

std::string random_secret() {
  unsigned char key[32];
  if (RAND_bytes(key, sizeof key) != 1) throw std::runtime_error("RAND_bytes failed");
  return "whsec_" + base64_encode(std::string_view(reinterpret_cast<const char*>(key), sizeof key));
}

std::string now_seconds() {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace hh::test
