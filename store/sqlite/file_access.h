#pragma once
// Why this user may not open a database file, or a file healthhook keeps beside it, in one
// line naming the file. SQLite says "unable to open database file" whatever the cause, and
// open(2) "Permission denied" alone: a database that `serve` created as root (0600), or a
// lock file it left, stopped every command run later as the service's user with neither
// the file's owner nor what to do (docs/troubleshooting.md quotes these lines;
// tests/faults/other_users_files_test.cpp).
#include <optional>
#include <string>
#include <string_view>

namespace hh::sqlite {

// What a file is, as the line names it.
inline constexpr std::string_view kDatabaseFile = "the database file";
inline constexpr std::string_view kLockFile = "the database's lock file";

// The line's words after "PATH: " (docs/troubleshooting.md quotes them).
inline constexpr std::string_view kMayNotRead = "this user may not read ";
inline constexpr std::string_view kMayNotReadWrite = "this user may not read and write ";
inline constexpr std::string_view kMayNotReach = "this user may not reach ";
inline constexpr std::string_view kMayNotCreate = "this user may not create ";

enum class Access { read, read_write };

// "PATH: this user may not read the database file (Permission denied; owner root, mode
// 0600)", or "… may not reach …: folder DIR is not searchable (…)", or "… may not create
// …: folder DIR is not writable (…)" for a file not there yet when `create`: the first thing
// on the way to `path` that this user (its effective ids) may not use, looked at with
// access() and stat(). nullopt when nothing is refused (the cause is elsewhere).
std::optional<std::string> access_refusal(const std::string& path, std::string_view what, Access need, bool create);

}  // namespace hh::sqlite
