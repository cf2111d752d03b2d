#include "fetcher/calls/bulk_connections.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "common/json_writer.h"
#include "common/uuid_text.h"
#include "fetcher/calls/recipe_file.h"

namespace hh::fetcher {
namespace {

// Service interface, POST /v2/link/bulk_import and bulk_export: the `provider` enum.
constexpr std::array<std::string_view, 16> kBulkProviders = {
    "oura",     "fitbit", "garmin", "strava",     "wahoo", "ihealth", "withings", "google_fit",
    "dexcom_v3", "polar", "cronometer", "omron", "whoop_v2", "my_fitness_pal_v2", "ultrahuman", "runkeeper"};

// wait_for_completion: the service answers 200 within 20 s, else 202; this much longer
// a wait for its answer.
constexpr std::chrono::seconds kImportWaitAnswer{20 + 15};

Result<void> read_ids(simdjson::dom::object object, const char* key, std::vector<std::string>& out) {
  simdjson::dom::array items;
  if (object[key].get_array().get(items)) return fail(std::string(key) + ": missing or not an array");
  for (auto item : items) {
    std::string_view text;
    if (item.get_string().get(text)) return fail(std::string(key) + ": an item is not a string");
    out.emplace_back(text);
  }
  return {};
}

}  // namespace

bool is_bulk_provider(std::string_view provider) {
  return std::find(kBulkProviders.begin(), kBulkProviders.end(), provider) != kBulkProviders.end();
}

std::string bulk_providers_list() {
  std::string out;
  for (const std::string_view provider : kBulkProviders) out.append(out.empty() ? "" : ", ").append(provider);
  return out;
}

Result<size_t> export_connections(const ServiceAccess& access, std::string_view provider,
                                  const std::optional<std::vector<std::string>>& user_ids,
                                  const std::function<Result<void>(std::string_view recipe)>& write_recipe,
                                  int64_t max_pages) {
  if (!is_bulk_provider(provider)) return fail(ErrorKind::data, "provider " + quoted_value(provider) + " is not one bulk export takes");
  size_t count = 0;
  std::optional<std::string> next_token;
  std::set<std::string> tokens_seen;
  std::map<std::string, int64_t> page_of_user;  // as import tells users apart (recipe_file.h)
  // The tokens of the pages read so far: a later page's error may quote them (redacted).
  std::vector<std::string> exported_tokens;
  simdjson::dom::parser parser;
  for (int64_t page = 1;; ++page) {
    std::string body;
    json::ObjectWriter request(body);
    request.string("provider", provider);
    if (user_ids) {
      std::string ids = "[";
      for (size_t i = 0; i < user_ids->size(); ++i) {
        if (i) ids.push_back(',');
        json::append_string(ids, (*user_ids)[i]);
      }
      request.raw("user_ids", ids + "]");
    } else {
      request.null("user_ids");
    }
    if (next_token) {
      request.string("next_token", *next_token);
    } else {
      request.null("next_token");
    }
    request.close();
    ServiceCall call;
    call.method = Method::post;
    call.segments = {"v2", "link", "bulk_export"};
    call.body = RequestBody{"application/json", std::move(body)};
    call.redact = exported_tokens;
    auto reply = call_service(access, call);
    if (!reply) return fail(reply);

    // Never quote the answer: it holds tokens.
    const std::string unexpected = reply->request + ": unexpected answer (page " + std::to_string(page) + "): ";
    const simdjson::padded_string padded(reply->body);
    simdjson::dom::object object;
    if (parser.parse(padded).get_object().get(object)) return fail(unexpected + "not a JSON object");
    simdjson::dom::array data;
    if (object["data"].get_array().get(data)) return fail(unexpected + "data: missing or not an array");
    size_t index = 0;
    for (auto item : data) {
      // Each recipe as import takes it (recipe_file.h): an export that import would refuse
      // is a failed export, not a file found wanting later.
      const std::string recipe = simdjson::minify(item);
      std::vector<std::string> tokens;
      auto user_id = check_recipe(recipe, tokens);
      if (!user_id) {
        // The service's answer is wrong, not the user's input: a failure (exit 1), not `data`.
        return fail(ErrorKind::other, unexpected + "data[" + std::to_string(index) +
                                          "]: not a connection recipe import takes: " + user_id.error());
      }
      // A user twice (pages that overlap: a connection that changed while the export paged,
      // or a fault of the service): import refuses such a file, and which of the two holds
      // the live tokens cannot be told (a refresh between the pages rotates them), so
      // keeping either may move revoked tokens. The export fails and writes nothing; run
      // it again.
      if (auto [at, added] = page_of_user.emplace(uuid_key(*user_id), page); !added) {
        return fail(ErrorKind::other, unexpected + "data[" + std::to_string(index) + "]: user " + quoted_value(*user_id) +
                                          " is also on page " + std::to_string(at->second) +
                                          " (import refuses a user twice; run the export again)");
      }
      if (auto written = write_recipe(recipe); !written) return fail(written);
      exported_tokens.insert(exported_tokens.end(), tokens.begin(), tokens.end());
      ++count;
      ++index;
    }
    simdjson::dom::element next;
    if (object["next_token"].get(next)) return fail(unexpected + "next_token: missing");
    if (next.is_null()) return count;
    std::string_view token;
    if (next.get_string().get(token)) return fail(unexpected + "next_token: neither a string nor null");
    if (token.empty()) return count;
    if (!tokens_seen.emplace(token).second) return fail(unexpected + "next_token came twice");
    if (page >= max_pages) return fail(reply->request + ": " + endless_pages_error(max_pages, "next_token"));
    next_token = std::string(token);
  }
}

Result<ImportAnswer> import_connections(const ServiceAccess& access, std::string_view provider,
                                        const std::vector<std::string>& recipes, bool wait,
                                        const std::vector<std::string>& tokens) {
  if (!is_bulk_provider(provider)) return fail(ErrorKind::data, "provider " + quoted_value(provider) + " is not one bulk import takes");
  std::string body;
  json::ObjectWriter request(body);
  request.string("provider", provider);
  std::string connections = "[";
  for (size_t i = 0; i < recipes.size(); ++i) {
    if (i) connections.push_back(',');
    connections += recipes[i];
  }
  connections.push_back(']');
  request.raw("connections", connections).boolean("wait_for_completion", wait);
  request.close();
  ServiceCall call;
  call.method = Method::post;
  call.segments = {"v2", "link", "bulk_import"};
  call.body = RequestBody{"application/json", std::move(body)};
  if (wait) call.read_timeout = kImportWaitAnswer;
  call.redact = tokens;
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);

  ImportAnswer answer;
  answer.status = reply->status;
  const std::string unexpected = reply->request + ": unexpected answer (HTTP " + std::to_string(reply->status) + "): ";
  if (reply->status != 200 && reply->status != 202) return fail(unexpected + "the interface names 200 and 202");
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(reply->body);
  simdjson::dom::object object;
  const bool is_object = !parser.parse(padded).get_object().get(object);
  if (reply->status == 202) {
    // Body not shown in the interface: use the lists only when both are there.
    if (!is_object) return answer;
    std::vector<std::string> imported, failed;
    if (read_ids(object, "user_ids_imported", imported) && read_ids(object, "user_ids_failed", failed)) {
      answer.lists = true;
      answer.imported = std::move(imported);
      answer.failed = std::move(failed);
    }
    return answer;
  }
  if (!is_object) return fail(unexpected + "not a JSON object");
  for (auto [key, list] : {std::pair{"user_ids_imported", &answer.imported}, std::pair{"user_ids_failed", &answer.failed}}) {
    if (auto read = read_ids(object, key, *list); !read) return fail(read.error_kind(), unexpected + read.error());
  }
  answer.lists = true;
  return answer;
}

}  // namespace hh::fetcher
