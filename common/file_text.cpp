#include "common/file_text.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hh {

Result<std::string> read_file_text(const std::string& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    return fail(ErrorKind::data, path + ": is a folder, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorKind::data, path + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return fail(ErrorKind::io, path + ": cannot read: " + std::strerror(errno));
  return text.str();
}

}  // namespace hh
