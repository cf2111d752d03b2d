#pragma once
// Errors as values on the hot path (style.md, LevelDB's Status): an expected failure
// (bad signature, bad JSON, busy database) is returned, not thrown. std::expected is
// C++23 and not in g++ 12, so this is the small subset we use.
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace hh {

// What kind of failure: callers decide on the kind (retry later, mark a delivery invalid,
// answer 503) instead of on the message text or a backend's own codes.
//   data:        the input itself is at fault (a constraint, a value out of range); retrying
//                the same input fails again
//   busy:        someone else holds the lock the operation needs; it may pass later
//   in_use:      another process holds the role the operation needs (a `serve`, `rebuild`
//                or `replay` applies the inbox): it does not pass by waiting; stop it first
//   io:          reading or writing failed (disk, network)
//   full:        out of space (disk, the configured size cap)
//   unavailable: the resource is not there or not reachable (missing file, no server)
//   other:       anything else (bugs, misuse), and every fail(message) without a kind
enum class ErrorKind { data, busy, in_use, io, full, unavailable, other };

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::other;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}        // NOLINT(google-explicit-constructor)

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  // Empty when ok (so it can be passed to a log or assertion message unconditionally).
  const std::string& error() const {
    static const std::string none;
    return ok() ? none : std::get<1>(state_).message;
  }
  // ErrorKind::other when ok.
  ErrorKind error_kind() const { return ok() ? ErrorKind::other : std::get<1>(state_).kind; }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error.message)), kind_(error.kind), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& error() const { return error_; }
  ErrorKind error_kind() const { return kind_; }

 private:
  std::string error_;
  ErrorKind kind_ = ErrorKind::other;
  bool ok_ = true;
};

inline Error fail(std::string message) { return Error{std::move(message)}; }
inline Error fail(ErrorKind kind, std::string message) { return Error{std::move(message), kind}; }

// A failure passed on: the error of `failed`, its kind kept (a busy store stays busy, a
// full disk full, up to where the kind is acted on: app/exit_codes.h, the receiver's 503).
// Never fail(failed): that makes every kind `other` (tests/layering's
// error_kinds_test finds such a re-wrap).
template <typename T>
Error fail(const Result<T>& failed) {
  return Error{failed.error(), failed.error_kind()};
}

// The same with `context` in front: "context: <error>".
template <typename T>
Error fail(const Result<T>& failed, std::string_view context) {
  return Error{std::string(context) + ": " + failed.error(), failed.error_kind()};
}

}  // namespace hh
