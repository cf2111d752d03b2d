#pragma once
// A fresh folder under $TMPDIR for one test, removed with everything in it afterwards.
#include <filesystem>
#include <string>

namespace hh::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `content` to `name` in this folder and returns the full path.
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

// A random "whsec_<base64 of 32 bytes>" secret (test secrets are generated, never stored).
std::string random_secret();

// Current Unix time in seconds, as a string (for signature timestamps).
std::string now_seconds();

}  // namespace hh::test
