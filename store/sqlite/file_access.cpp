#include "store/sqlite/file_access.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace hh::sqlite {
namespace {

// "owner root, mode 0600": who may, for the reader to compare with who ran the command.
std::string owner_and_mode(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  std::string owner = std::to_string(info.st_uid);
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[1024];
  if (::getpwuid_r(info.st_uid, &entry, buffer, sizeof buffer, &found) == 0 && found) owner = found->pw_name;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
  return "; owner " + owner + ", mode " + mode;
}

// errno of access() as this process's effective ids, 0 when allowed.
int refused(const std::string& path, int mode) {
  return ::faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0 ? 0 : errno;
}

bool permission(int error) { return error == EACCES || error == EPERM; }

std::string because(int error, const std::string& looked_at) {
  return " (" + std::string(std::strerror(error)) + owner_and_mode(looked_at) + ")";
}

}  // namespace

std::optional<std::string> access_refusal(const std::string& path, std::string_view what, Access need, bool create) {
  const std::string named = path + ": ";
  // Each folder on the way, from the top: one this user may not search hides the file.
  const std::filesystem::path file(path);
  std::filesystem::path folder;
  for (auto part = file.begin(); part != file.end() && std::next(part) != file.end(); ++part) {
    folder /= *part;
    if (const int error = refused(folder.string(), X_OK); permission(error)) {
      return named + std::string(kMayNotReach) + std::string(what) + ": folder " + folder.string() +
             " is not searchable" + because(error, folder.string());
    }
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno != ENOENT || !create) return std::nullopt;
    const std::string parent = folder.empty() ? "." : folder.string();
    if (const int error = refused(parent, W_OK); permission(error)) {
      return named + std::string(kMayNotCreate) + std::string(what) + ": folder " + parent + " is not writable" +
             because(error, parent);
    }
    return std::nullopt;
  }
  const int mode = need == Access::read ? R_OK : R_OK | W_OK;
  if (const int error = refused(path, mode); permission(error)) {
    return named + std::string(need == Access::read ? kMayNotRead : kMayNotReadWrite) + std::string(what) +
           because(error, path);
  }
  return std::nullopt;
}

}  // namespace hh::sqlite
