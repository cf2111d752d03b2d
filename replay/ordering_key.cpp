#include "replay/ordering_key.h"

#include <simdjson.h>

namespace hh::replay {
namespace {

namespace od = simdjson::ondemand;

// `user_id` among the members of `object`, when it is a string.
bool find_user_id(od::object object, std::string& out, bool look_into_data) {
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "user_id") {
      std::string_view value;
      if (field.value().get_string().get(value) == simdjson::SUCCESS) {
        out.assign(value);
        return true;
      }
    } else if (look_into_data && key == "data") {
      od::object data;
      if (field.value().get_object().get(data) == simdjson::SUCCESS && find_user_id(data, out, false)) return true;
    }
  }
  return false;
}

}  // namespace

std::string ordering_key(std::string& body) {
  thread_local od::parser parser;  // one per thread, reused (style.md)
  body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  std::string key;
  od::document doc;
  if (parser.iterate(body.data(), body.size(), body.capacity()).get(doc)) return key;
  od::object object;
  if (doc.get_object().get(object)) return key;
  find_user_id(object, key, true);
  return key;
}

}  // namespace hh::replay
