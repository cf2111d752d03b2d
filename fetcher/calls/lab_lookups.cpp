#include "fetcher/calls/lab_lookups.h"

#include <simdjson.h>

#include <algorithm>

namespace hh::fetcher {
namespace {

// The labs of the area info's `lab`/`labs` enum (service interface; non-exhaustive).
constexpr std::string_view kLabs[] = {"quest", "labcorp", "bioreference", "sonora_quest"};

Result<std::string> json_answer(const ServiceAccess& access, ServiceCall call) {
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(reply->body);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root)) return fail(reply->request + ": unexpected answer: not JSON");
  return std::move(reply->body);
}

}  // namespace

bool is_area_radius(int64_t miles) {
  return std::find(std::begin(kAreaRadii), std::end(kAreaRadii), miles) != std::end(kAreaRadii);
}

bool is_five_digit_zip(std::string_view zip) {
  return zip.size() == 5 && std::all_of(zip.begin(), zip.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_listed_lab(std::string_view lab) { return std::find(std::begin(kLabs), std::end(kLabs), lab) != std::end(kLabs); }

Result<std::string> list_labs(const ServiceAccess& access) {
  ServiceCall call;
  call.segments = {"v3", "lab_tests", "labs"};
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);
  const std::string unexpected = reply->request + ": unexpected answer: ";
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(reply->body);
  simdjson::dom::array labs;
  if (parser.parse(padded).get_array().get(labs)) return fail(unexpected + "not a JSON array");
  size_t index = 0;
  for (auto lab : labs) {
    const std::string where = unexpected + "[" + std::to_string(index++) + "].";
    int64_t id = 0;
    if (lab["id"].get_int64().get(id)) return fail(where + "id: missing or not an integer");
    for (const char* key : {"slug", "name", "first_line_address", "city", "zipcode"}) {
      if (!lab[key].is_string()) return fail(where + key + ": missing or not a string");
    }
    for (const char* key : {"collection_methods", "sample_types"}) {
      if (!lab[key].is_array()) return fail(where + key + ": missing or not an array");
    }
  }
  return std::move(reply->body);
}

Result<std::string> list_lab_accounts(const ServiceAccess& access, const LabAccountFilter& filter) {
  ServiceCall call;
  call.segments = {"v3", "lab_test", "lab_account"};
  if (filter.lab_account_id) call.query.emplace_back("lab_account_id", *filter.lab_account_id);
  if (filter.status) call.query.emplace_back("status", *filter.status);
  return json_answer(access, std::move(call));
}

Result<std::string> list_markers(const ServiceAccess& access, std::optional<std::string_view> lab_slug) {
  ServiceCall call;
  call.segments = {"v3", "lab_tests", "markers"};
  if (lab_slug) call.query.emplace_back("lab_slug", std::string(*lab_slug));
  return json_answer(access, std::move(call));
}

Result<std::string> area_info(const ServiceAccess& access, const AreaQuery& query) {
  if (!is_five_digit_zip(query.zip_code)) {
    return fail(ErrorKind::data, "zip code " + quoted_value(query.zip_code) + " is not five digits");
  }
  if (query.radius && !is_area_radius(*query.radius)) {
    return fail(ErrorKind::data, "radius " + std::to_string(*query.radius) + " is not 10, 20, 25, 50 or 100");
  }
  ServiceCall call;
  call.segments = {"v3", "order", "area", "info"};
  call.query.emplace_back("zip_code", query.zip_code);
  if (query.radius) call.query.emplace_back("radius", std::to_string(*query.radius));
  for (const std::string& lab : query.labs) call.query.emplace_back("labs", lab);
  if (query.lab_account_id) call.query.emplace_back("lab_account_id", *query.lab_account_id);
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);
  const std::string unexpected = reply->request + ": unexpected answer: ";
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(reply->body);
  simdjson::dom::object area;
  if (parser.parse(padded).get_object().get(area)) return fail(unexpected + "not a JSON object");
  std::string_view zip_code;
  if (area["zip_code"].get_string().get(zip_code)) return fail(unexpected + "zip_code: missing or not a string");
  // An answer for another area would be printed as this one's (as `refresh` refuses an
  // answer for another user). The interface allows ZIP+4, so "10001-1234" answers "10001".
  if (zip_code != query.zip_code && !zip_code.starts_with(query.zip_code + "-")) {
    return fail(unexpected + "zip_code " + quoted_value(zip_code) + " is not the one asked for (" + query.zip_code + ")");
  }
  if (!area["phlebotomy"].is_object()) return fail(unexpected + "phlebotomy: missing or not an object");
  if (!area["phlebotomy"]["is_served"].is_bool()) return fail(unexpected + "phlebotomy.is_served: missing or not a boolean");
  if (!area["central_labs"].is_object()) return fail(unexpected + "central_labs: missing or not an object");
  return std::move(reply->body);
}

}  // namespace hh::fetcher
