#include "fetcher/calls/recipe_file.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include "common/file_text.h"
#include "common/uuid_text.h"
#include "fetcher/service_values.h"

namespace hh::fetcher {
namespace {

std::string errno_text(const std::string& path) { return path + ": " + std::strerror(errno); }

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

Result<std::string> check_recipe(std::string_view line, std::vector<std::string>& tokens) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(line);
  simdjson::dom::object recipe;
  if (auto code = parser.parse(padded).get_object().get(recipe)) {
    return fail(ErrorKind::data, code == simdjson::INCORRECT_TYPE ? "not a JSON object" : "not valid JSON");
  }
  std::string_view user_id, access_token;
  if (recipe["user_id"].get_string().get(user_id)) return fail(ErrorKind::data, "user_id: missing or not a string");
  if (!is_uuid(user_id)) return fail(ErrorKind::data, "user_id: not a UUID");
  if (recipe["access_token"].get_string().get(access_token) || access_token.empty()) {
    return fail(ErrorKind::data, "access_token: missing, empty or not a string");
  }
  const std::vector<std::string>::size_type first_token = tokens.size();
  tokens.emplace_back(access_token);
  std::vector<std::string_view> keys;  // a member given twice: which one counts is the reader's guess
  for (auto member : recipe) {
    const std::string_view key = member.key;  // not a structured binding: clang 14 cannot capture one
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
      tokens.resize(first_token);
      return fail(ErrorKind::data, std::string(key) + ": given twice");
    }
    keys.push_back(key);
    const simdjson::dom::element value = member.value;
    const auto type = value.type();
    const bool null = type == simdjson::dom::element_type::NULL_VALUE;
    const auto wrong = [&](const char* expected) {
      tokens.resize(first_token);
      return fail(ErrorKind::data, std::string(key) + ": not " + expected);
    };
    if (key == "refresh_token") {
      if (null) continue;
      std::string_view token;
      if (value.get_string().get(token)) return wrong("a string or null");
      if (!token.empty()) tokens.emplace_back(token);
    } else if (key == "provider_id") {
      if (!null && type != simdjson::dom::element_type::STRING) return wrong("a string or null");
    } else if (key == "expires_at") {
      if (!null && type != simdjson::dom::element_type::INT64 && type != simdjson::dom::element_type::UINT64) {
        return wrong("an integer or null");
      }
    } else if (key == "oauth_scopes") {
      if (null) continue;
      simdjson::dom::array scopes;
      if (value.get_array().get(scopes)) return wrong("an array of strings or null");
      for (auto scope : scopes) {
        if (!scope.is_string()) return wrong("an array of strings or null");
      }
    }
  }
  return std::string(user_id);
}

Result<Recipes> read_recipe_file(const std::string& path) {
  // A recipe is a few tokens and scopes: a line of a MiB is no recipe (and /dev/zero, one
  // line that never ends, is refused there instead of read until memory runs out).
  constexpr size_t kMaxLineBytes = 1u << 20;
  auto opened = open_text_file(path);
  if (!opened) return fail(opened);
  std::ifstream& in = *opened;
  Recipes recipes;
  std::map<std::string, size_t, std::less<>> line_of_user;
  std::string line;
  for (size_t number = 1;; ++number) {
    const LineRead read = getline_within(in, line, kMaxLineBytes);
    if (read == LineRead::end) break;
    if (read == LineRead::too_long) {
      return fail(ErrorKind::data, path + ":" + std::to_string(number) + ": longer than 1 MiB (one recipe a line)");
    }
    // An editor's UTF-8 byte order mark before the first line, as replay skips it.
    if (number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
    if (is_blank(line)) continue;
    auto user_id = check_recipe(line, recipes.tokens);
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (!user_id) return fail(ErrorKind::data, where + user_id.error());
    // Told apart as the service tells ids apart: a user's id in upper case is the same user.
    if (auto [at, added] = line_of_user.emplace(uuid_key(*user_id), number); !added) {
      return fail(ErrorKind::data, where + "user_id: the same user is also on line " + std::to_string(at->second));
    }
    recipes.user_ids.push_back(std::move(*user_id));
    recipes.lines.push_back(std::move(line));
  }
  if (in.bad()) return fail(ErrorKind::io, errno_text(path));
  return recipes;
}

Result<RecipeWriter> RecipeWriter::create(const std::string& path) {
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && S_ISDIR(existing.st_mode)) {
    return fail(ErrorKind::data, path + ": is a folder");
  }
  std::string temporary = path + ".partial";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail(ErrorKind::io, errno_text(temporary));
  // A leftover temporary file keeps its mode through O_TRUNC: it holds tokens now.
  if (::fchmod(fd, 0600) != 0) {
    const std::string error = errno_text(temporary);
    ::close(fd);
    return fail(ErrorKind::io, error);
  }
  std::FILE* file = ::fdopen(fd, "w");
  if (!file) {
    const std::string error = errno_text(temporary);
    ::close(fd);
    return fail(ErrorKind::io, error);
  }
  return RecipeWriter(path, std::move(temporary), file);
}

RecipeWriter::RecipeWriter(RecipeWriter&& other) noexcept
    : path_(std::move(other.path_)), temporary_(std::move(other.temporary_)), file_(other.file_) {
  other.file_ = nullptr;
  other.temporary_.clear();
}

RecipeWriter::~RecipeWriter() {
  if (file_) std::fclose(file_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

Result<void> RecipeWriter::write(std::string_view recipe) {
  if (std::fwrite(recipe.data(), 1, recipe.size(), file_) != recipe.size() || std::fputc('\n', file_) == EOF) {
    return fail(ErrorKind::io, errno_text(temporary_));
  }
  return {};
}

Result<void> RecipeWriter::finish() {
  std::FILE* file = file_;
  file_ = nullptr;
  const bool flushed = std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  const std::string error = flushed ? std::string() : errno_text(temporary_);
  if (std::fclose(file) != 0 && flushed) return fail(ErrorKind::io, errno_text(temporary_));
  if (!flushed) return fail(ErrorKind::io, error);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) return fail(ErrorKind::io, errno_text(path_));
  temporary_.clear();
  return {};
}

}  // namespace hh::fetcher
