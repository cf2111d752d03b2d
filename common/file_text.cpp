#include "common/file_text.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace hh {

Result<std::ifstream> open_text_file(const std::string& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    return fail(ErrorKind::data, path + ": is a folder, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorKind::data, path + ": cannot read: " + std::strerror(errno));
  return in;
}

Result<std::string> read_file_text(const std::string& path, size_t max_bytes) {
  auto opened = open_text_file(path);
  if (!opened) return fail(opened);
  std::ifstream& in = *opened;
  std::string text;
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return fail(ErrorKind::data, path + ": larger than " + std::to_string(max_bytes >> 20) + " MiB");
    }
  }
  if (in.bad()) return fail(ErrorKind::io, path + ": cannot read: " + std::strerror(errno));
  return text;
}

LineRead getline_within(std::istream& in, std::string& line, size_t max_bytes) {
  line.clear();
  std::streambuf* buffer = in.rdbuf();
  for (;;) {
    const int c = buffer ? buffer->sbumpc() : std::char_traits<char>::eof();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return line.empty() ? LineRead::end : LineRead::line;
    }
    if (c == '\n') return LineRead::line;
    if (line.size() == max_bytes) return LineRead::too_long;
    line.push_back(static_cast<char>(c));
  }
}

}  // namespace hh
