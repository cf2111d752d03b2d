#include "fetcher/service_calls.h"


#include <simdjson.h>

#include <algorithm>

#include "common/json_writer.h"
#include "fetcher/service_values.h"

namespace hh::fetcher {
namespace {

// Beyond the refresh's own timeout: the service's time to answer once it stopped waiting
// for the sources.
constexpr std::chrono::seconds kRefreshAnswerGrace{15};

Result<void> read_strings(simdjson::dom::object object, const char* key, std::vector<std::string>& out) {
  simdjson::dom::array items;
  if (object[key].get_array().get(items)) return fail(std::string(key) + ": missing or not an array");
  for (auto item : items) {
    std::string_view text;
    if (item.get_string().get(text)) return fail(std::string(key) + ": an item is not a string");
    out.emplace_back(text);
  }
  return {};
}

// The interface's Refresh result: all five fields are required.
Result<RefreshResult> read_refresh_result(const std::string& body) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(body);
  simdjson::dom::object object;
  if (parser.parse(padded).get_object().get(object)) return fail("not a JSON object");
  RefreshResult result;
  if (object["success"].get_bool().get(result.success)) return fail("success: missing or not a boolean");
  std::string_view user_id;
  if (object["user_id"].get_string().get(user_id)) return fail("user_id: missing or not a string");
  result.user_id = std::string(user_id);
  for (auto [key, list] : {std::pair{"refreshed_sources", &result.refreshed_sources},
                           std::pair{"in_progress_sources", &result.in_progress_sources},
                           std::pair{"failed_sources", &result.failed_sources}}) {
    if (auto read = read_strings(object, key, *list); !read) return fail(read);
  }
  return result;
}

Result<void> check_user_id(std::string_view user_id) {
  if (!is_uuid(user_id)) return fail(ErrorKind::data, "user id " + quoted_value(user_id) + " is not a UUID");
  return {};
}

}  // namespace

Result<RefreshResult> refresh_user(const ServiceAccess& access, std::string_view user_id, int64_t timeout_s) {
  if (auto checked = check_user_id(user_id); !checked) return fail(ErrorKind::data, checked.error());
  if (timeout_s < kRefreshTimeoutMinS || timeout_s > kRefreshTimeoutMaxS) {
    return fail(ErrorKind::data, "timeout " + std::to_string(timeout_s) + " is not between " +
                                     std::to_string(kRefreshTimeoutMinS) + " and " +
                                     std::to_string(kRefreshTimeoutMaxS) + " seconds");
  }
  ServiceCall call;
  call.method = Method::post;
  call.segments = {"v2", "user", "refresh", std::string(user_id)};
  call.query = {{"timeout", std::to_string(timeout_s)}};
  call.read_timeout = std::chrono::seconds(timeout_s) + kRefreshAnswerGrace;
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);
  auto result = read_refresh_result(reply->body);
  if (!result) return fail(result, "POST /v2/user/refresh: unexpected answer");
  // The answer is about the user asked for.
  if (!same_uuid(result->user_id, user_id)) {
    return fail("POST /v2/user/refresh: unexpected answer: user_id " + quoted_value(result->user_id) +
                " is not the user asked for");
  }
  return result;
}

Result<bool> deregister_user(const ServiceAccess& access, std::string_view user_id, std::string_view provider) {
  if (auto checked = check_user_id(user_id); !checked) return fail(ErrorKind::data, checked.error());
  if (provider.empty()) return fail(ErrorKind::data, "provider is empty");
  ServiceCall call;
  call.method = Method::delete_;
  call.segments = {"v2", "user", std::string(user_id), std::string(provider)};
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(reply->body);
  simdjson::dom::object object;
  bool success = false;
  if (parser.parse(padded).get_object().get(object) || object["success"].get_bool().get(success)) {
    return fail("DELETE /v2/user: unexpected answer: success: missing or not a boolean");
  }
  return success;
}

bool is_sdk_provider(std::string_view provider) {
  return provider == "apple_health_kit" || provider == "health_connect" || provider == "samsung_health";
}

Result<std::string> update_user(const ServiceAccess& access, std::string_view user_id, const UserUpdate& fields) {
  if (auto checked = check_user_id(user_id); !checked) return fail(ErrorKind::data, checked.error());
  if (fields.empty()) return fail(ErrorKind::data, "nothing to update: give at least one field");
  std::string body;
  json::ObjectWriter object(body);
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto& [name, value] = fields[i];
    if (std::find(std::begin(kUserUpdateFields), std::end(kUserUpdateFields), name) == std::end(kUserUpdateFields)) {
      return fail(ErrorKind::data, "field " + quoted_value(name) + " is not one PATCH /v2/user/{user_id} takes");
    }
    for (size_t j = 0; j < i; ++j) {
      if (fields[j].first == name) return fail(ErrorKind::data, "field " + name + " given twice");
    }
    if (value) {
      object.string(name, *value);
    } else {
      object.null(name);
    }
  }
  object.close();
  ServiceCall call;
  call.method = Method::patch;
  call.segments = {"v2", "user", std::string(user_id)};
  call.body = RequestBody{"application/json", std::move(body)};
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(reply->body);
  simdjson::dom::object answer;
  if (parser.parse(padded).get_object().get(answer)) {
    return fail("PATCH /v2/user: unexpected answer: not a JSON object");
  }
  return std::move(reply->body);
}

}  // namespace hh::fetcher
