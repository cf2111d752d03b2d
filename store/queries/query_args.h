#pragma once
// The parameters of one read statement (?1, ?2, … in order), as the read queries of both
// backends pass them to their backend's listings (store/queries/listings.h says what a
// backend provides). Values are viewed, not copied: they must stay alive until the listing
// has started (both backends bind or send them at once).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hh::store {

struct QueryArg {
  enum class Kind { null, integer, text };
  Kind kind = Kind::null;
  int64_t integer = 0;
  std::string_view text;
};

class QueryArgs {
 public:
  static constexpr size_t kMax = 12;

  QueryArgs& add(int64_t value) { return push({QueryArg::Kind::integer, value, {}}); }
  QueryArgs& add(std::string_view value) { return push({QueryArg::Kind::text, 0, value}); }
  QueryArgs& add(const std::string& value) { return add(std::string_view(value)); }
  QueryArgs& add_null() { return push({}); }
  QueryArgs& add(const std::optional<int64_t>& value) { return value ? add(*value) : add_null(); }
  QueryArgs& add(const std::optional<std::string_view>& value) { return value ? add(*value) : add_null(); }
  QueryArgs& add(const std::optional<std::string>& value) {
    return value ? add(std::string_view(*value)) : add_null();
  }

  size_t size() const { return size_; }
  const QueryArg& operator[](size_t i) const { return args_[i]; }

 private:
  QueryArgs& push(QueryArg arg) {
    args_[size_++] = arg;  // a statement of the store's has at most kMax parameters
    return *this;
  }
  std::array<QueryArg, kMax> args_{};
  size_t size_ = 0;
};

}  // namespace hh::store
