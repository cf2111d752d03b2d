#pragma once
// The connection recipes file of `healthhook connections export|import`: JSON Lines, one
// ConnectionRecipe object per line (service interface, ConnectionRecipe):
//
//   {"user_id":"<uuid>","access_token":"…","refresh_token":"…","provider_id":"…",
//    "expires_at":1718000000,"oauth_scopes":["…"]}
//
// Blank lines are skipped. The interface does not say which fields are required; a
// recipe needs at least its user_id (a UUID) and access_token (a string) to mean
// anything, and every listed field present must have its listed type (null allowed for
// all but those two). Other members are kept and sent as they are; no member may be given
// twice in a line (parsers differ on which one counts: ours would check one user, the
// service's might import another). A user id may appear once per file.
//
// The file holds OAuth tokens: it is created readable by its owner only (0600, whatever
// the umask), written to a temporary name beside it and renamed when complete, so an
// interrupted export leaves no partial file. No error here quotes a line's content.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hh::fetcher {

struct Recipes {
  std::vector<std::string> lines;     // each a checked JSON object, as written in the file
  std::vector<std::string> user_ids;  // in the same order
  std::vector<std::string> tokens;    // every access_token and refresh_token (for redaction)
};

// Reads and checks `path`; the first problem fails with "path:line: why" (ErrorKind::data),
// naming the member, never its value.
Result<Recipes> read_recipe_file(const std::string& path);

// Checks one line; returns its user id and appends its tokens to `tokens`.
Result<std::string> check_recipe(std::string_view line, std::vector<std::string>& tokens);

class RecipeWriter {
 public:
  // Creates `path`'s temporary file (0600). Refuses a path that names a folder.
  static Result<RecipeWriter> create(const std::string& path);
  RecipeWriter(RecipeWriter&& other) noexcept;
  RecipeWriter& operator=(RecipeWriter&&) = delete;
  ~RecipeWriter();  // not finished: the temporary file is removed

  Result<void> write(std::string_view recipe);  // one line
  // Syncs the file and renames it to `path` (replacing a file there).
  Result<void> finish();

 private:
  RecipeWriter(std::string path, std::string temporary, std::FILE* file)
      : path_(std::move(path)), temporary_(std::move(temporary)), file_(file) {}
  std::string path_, temporary_;
  std::FILE* file_ = nullptr;
};

}  // namespace hh::fetcher
