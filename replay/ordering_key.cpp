#include "replay/ordering_key.h"

#include <optional>
#include <simdjson.h>

namespace hh::replay {
namespace {

namespace od = simdjson::ondemand;

struct NamedUsers {
  std::optional<std::string> envelope;  // $.user_id
  std::optional<std::string> data;      // $.data.user_id
};

// `user_id` among the members of `object`, when it is a string (and, at the top, the one
// of its `data` object).
bool read_users(od::object object, std::optional<std::string>& user, std::optional<std::string>* data_user) {
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "user_id") {
      std::string_view value;
      if (field.value().get_string().get(value) == simdjson::SUCCESS) user.emplace(value);
    } else if (data_user != nullptr && key == "data") {
      od::object data;
      if (field.value().get_object().get(data) == simdjson::SUCCESS && !read_users(data, *data_user, nullptr)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

OrderingKey ordering_key(std::string& body) {
  thread_local od::parser parser;  // one per thread, reused (style.md)
  body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  OrderingKey key;
  od::document doc;
  if (parser.iterate(body.data(), body.size(), body.capacity()).get(doc)) return key;
  od::object object;
  if (doc.get_object().get(object)) return key;
  NamedUsers users;
  // A body that stops being JSON half-way keeps what was read before (the receiver marks
  // it invalid: it touches no row).
  read_users(object, users.envelope, &users.data);
  key.user = users.envelope ? *users.envelope : users.data.value_or("");
  key.two_users = users.envelope && users.data && *users.envelope != *users.data;
  return key;
}

}  // namespace hh::replay
