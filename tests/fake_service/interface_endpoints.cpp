#include "tests/fake_service/interface_endpoints.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <tuple>

#include "common/json_writer.h"
#include "common/timestamp.h"
#include "tests/fake_service/fake_bodies.h"

namespace hh::fake {
namespace {

// Service interface, POST /v2/link/bulk_import and bulk_export: the `provider` enum.
const std::set<std::string> kBulkProviders = {"oura", "fitbit", "garmin", "strava", "wahoo", "ihealth",
                                              "withings", "google_fit", "dexcom_v3", "polar", "cronometer", "omron",
                                              "whoop_v2", "my_fitness_pal_v2", "ultrahuman", "runkeeper"};
// PATCH /v2/user/{user_id}: the fields it takes.
const std::set<std::string> kUserFields = {"fallback_time_zone", "fallback_birth_date", "ingestion_start",
                                           "ingestion_end", "client_user_id"};
constexpr size_t kMaxReportBytes = 10 * 1024 * 1024;  // "up to 10 MB"

std::vector<std::string> params(const InterfaceRequest& request, std::string_view key) {
  std::vector<std::string> values;
  for (const auto& [name, value] : request.query) {
    if (name == key) values.push_back(value);
  }
  return values;
}

std::optional<std::string> param(const InterfaceRequest& request, std::string_view key) {
  auto values = params(request, key);
  if (values.empty()) return std::nullopt;
  return values.front();
}

std::string hex8(uint64_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i, n >>= 4) out[static_cast<size_t>(i)] = kDigits[n & 0xf];
  return out;
}

std::string uuid_from(uint64_t n, char variant) {
  return hex8(n) + "-" + hex8(n * 7).substr(0, 4) + "-4" + hex8(n * 13).substr(0, 3) + "-" + variant +
         hex8(n * 17).substr(0, 3) + "-" + hex8(n * 31) + hex8(n * 37).substr(0, 4);
}

// The interface's search_query pattern, read as characters (UTF-8): letters A-Z a-z,
// Latin-1 letters U+00C0-00FF except U+00D7 and U+00F7, digits, ( ) , / : ' | & _ -,
// white space, U+2019; at most 80.
bool search_allowed(std::string_view text) {
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++count) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (!std::isalnum(c) && !std::isspace(c) && std::string_view("(),/:'|&_-").find(static_cast<char>(c)) == std::string_view::npos) {
        return false;
      }
      ++i;
    } else if (c == 0xc3 && i + 1 < text.size()) {  // U+00C0..U+00FF
      const auto second = static_cast<unsigned char>(text[i + 1]);
      if (second < 0x80 || second > 0xbf || second == 0x97 || second == 0xb7) return false;
      i += 2;
    } else if (text.substr(i, 3) == "\xe2\x80\x99") {  // U+2019
      i += 3;
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xa0) {  // NBSP: \s
      i += 2;
    } else {
      return false;
    }
  }
  return count <= 80;
}

bool contains_ignoring_case(std::string_view text, std::string_view part) {
  auto it = std::search(text.begin(), text.end(), part.begin(), part.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end() || part.empty();
}

std::string string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out.push_back(',');
    json::append_string(out, items[i]);
  }
  return out + "]";
}

// A header parameter (`boundary`, `name`, `filename`) of a Content-Type or
// Content-Disposition value; quoted or not.
std::string header_parameter(std::string_view header, std::string_view name) {
  const std::string key = std::string(name) + "=";
  for (size_t at = header.find(key); at != std::string_view::npos; at = header.find(key, at + 1)) {
    if (at > 0 && header[at - 1] != ' ' && header[at - 1] != ';') continue;
    std::string_view value = header.substr(at + key.size());
    if (!value.empty() && value.front() == '"') {
      value.remove_prefix(1);
      return std::string(value.substr(0, value.find('"')));
    }
    return std::string(value.substr(0, value.find(';')));
  }
  return {};
}

// RFC 7578 multipart/form-data; nullopt when it is not well formed.
std::optional<std::vector<FormPart>> parse_form(std::string_view content_type, std::string_view body) {
  if (!content_type.starts_with("multipart/form-data")) return std::nullopt;
  const std::string boundary = header_parameter(content_type, "boundary");
  if (boundary.empty()) return std::nullopt;
  const std::string delimiter = "--" + boundary;
  std::vector<FormPart> parts;
  size_t at = body.find(delimiter);
  if (at != 0) return std::nullopt;
  for (;;) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") return parts;
    if (body.substr(at, 2) != "\r\n") return std::nullopt;
    at += 2;
    const size_t head_end = body.find("\r\n\r\n", at);
    if (head_end == std::string_view::npos) return std::nullopt;
    FormPart part;
    const std::string_view head = body.substr(at, head_end - at);
    for (size_t line = 0; line < head.size();) {
      const size_t end = std::min(head.find("\r\n", line), head.size());
      const std::string_view header = head.substr(line, end - line);
      std::string lower(header.substr(0, header.find(':')));
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "content-disposition") {
        part.name = header_parameter(header, "name");
        part.filename = header_parameter(header, "filename");
      } else if (lower == "content-type" && header.size() > lower.size() + 1) {
        std::string_view value = header.substr(lower.size() + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        part.content_type = std::string(value);
      }
      line = end + 2;
    }
    const size_t content = head_end + 4;
    const size_t next = body.find("\r\n" + delimiter, content);
    if (next == std::string_view::npos) return std::nullopt;
    part.bytes = std::string(body.substr(content, next - content));
    parts.push_back(std::move(part));
    at = next + 2;
  }
}

std::string_view sniffed_type(std::string_view bytes) {
  if (bytes.starts_with("%PDF-")) return "application/pdf";
  if (bytes.starts_with("\xff\xd8\xff")) return "image/jpeg";
  if (bytes.starts_with("\x89PNG\r\n\x1a\n")) return "image/png";
  return {};
}

}  // namespace

Reply detail(unsigned status, std::string_view text) {
  std::string body = "{\"detail\":";
  json::append_string(body, text);
  return Reply{status, body + "}", std::nullopt};
}

bool fake_is_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (text[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

InterfaceEndpoints::InterfaceEndpoints() = default;

bool InterfaceEndpoints::is_management_path(const std::vector<std::string>& segments) {
  return segments.size() == 4 && segments[0] == "v1" && segments[1] == "org" && segments[3] == "team";
}

std::optional<Reply> InterfaceEndpoints::route(const InterfaceRequest& request) {
  const auto& s = request.segments;
  const std::string& method = request.method;
  if (method == "PATCH" && s.size() == 3 && s[0] == "v2" && s[1] == "user") return update_user(s[2], request);
  if (method == "POST" && s == std::vector<std::string>{"v2", "link", "code", "create"}) return create_link_code(request);
  if (method == "GET" && is_management_path(s)) return list_teams(s[2], request);
  if (method == "POST" && s == std::vector<std::string>{"v2", "link", "bulk_export"}) return bulk_export(request);
  if (method == "POST" && s == std::vector<std::string>{"v2", "link", "bulk_import"}) return bulk_import(request);
  if (s.size() >= 4 && s[0] == "lab_report" && s[1] == "v1" && s[2] == "parser" && s[3] == "job") {
    if (method == "POST" && s.size() == 4) return upload_lab_report(request);
    if (method == "GET" && s.size() == 5) return get_parsing_job(s[4]);
    return detail(405, "Method Not Allowed");
  }
  if (method == "GET" && s == std::vector<std::string>{"v3", "lab_tests", "labs"}) {
    return Reply{200,
                 R"([{"id":1,"slug":"quest","name":"Quest Diagnostics","first_line_address":"500 Plaza Dr",)"
                 R"("city":"Secaucus","zipcode":"07094","collection_methods":["walk_in_test","at_home_phlebotomy"],)"
                 R"("sample_types":["serum","urine"]},)"
                 R"({"id":2,"slug":"labcorp","name":"Labcorp","first_line_address":"531 S Spring St",)"
                 R"("city":"Burlington","zipcode":"27215","collection_methods":["walk_in_test","testkit"],)"
                 R"("sample_types":["serum","dried_blood_spot"]}])",
                 std::nullopt};
  }
  if (method == "GET" && s == std::vector<std::string>{"v3", "lab_test", "lab_account"}) return lab_accounts(request);
  if (method == "GET" && s == std::vector<std::string>{"v3", "lab_tests", "markers"}) return markers(request);
  if (method == "GET" && s == std::vector<std::string>{"v3", "order", "area", "info"}) return area_info(request);
  return std::nullopt;
}

Reply InterfaceEndpoints::update_user(const std::string& user_id, const InterfaceRequest& request) {
  if (!fake_is_uuid(user_id)) return detail(422, "user_id must be a UUID");
  if (!request.content_type.starts_with("application/json")) return detail(422, "expected a JSON body");
  simdjson::dom::parser parser;
  simdjson::dom::object fields;
  if (parser.parse(simdjson::padded_string(request.body)).get_object().get(fields)) {
    return detail(422, "body must be a JSON object");
  }
  for (auto [key, value] : fields) {
    if (!kUserFields.count(std::string(key))) return detail(422, "unknown field " + std::string(key));
    if (!value.is_string() && !value.is_null()) return detail(422, std::string(key) + " must be a string or null");
  }
  return detail(200, "User updated");
}

Reply InterfaceEndpoints::create_link_code(const InterfaceRequest& request) {
  const auto user_id = param(request, "user_id");
  if (!user_id || !fake_is_uuid(*user_id)) return detail(422, "user_id must be a UUID");
  if (!request.body.empty()) return detail(422, "the request takes no body");
  int64_t expires_ms = unix_now_ms() + 3600 * 1000;  // "server time plus one hour"
  if (const auto expires_at = param(request, "expires_at")) {
    const auto ms = parse_iso8601_ms(*expires_at);
    if (!ms) return detail(422, "expires_at must be a date-time");
    expires_ms = *ms;
  }
  std::string code;
  {
    std::lock_guard lock(mutex_);
    code = link_code_ ? *link_code_ : "pkus" + hex8(0x5eed0000 + ++link_codes_made_);
  }
  std::string body;
  json::ObjectWriter(body)
      .string("code", code)
      .string("exchange_url", "healthapp://link?code=" + code)
      .string("expires_at", service_time(expires_ms))
      .close();
  return Reply{200, body, std::nullopt};
}

Reply InterfaceEndpoints::list_teams(const std::string& org_id, const InterfaceRequest& request) {
  if (!fake_is_uuid(org_id)) return detail(422, "org_id must be a UUID");
  const std::vector<std::string> regions = params(request, "region");
  for (const std::string& region : regions) {
    if (region != "us" && region != "eu") return detail(422, "region must be us or eu");
  }
  const auto search = param(request, "search_query");
  if (search && !search_allowed(*search)) return detail(422, "search_query does not match the pattern");
  std::lock_guard lock(mutex_);
  if (org_id != org_id_) return detail(404, "Organization not found");
  if (endless_pages_) return Reply{200, R"({"teams":[],"next_cursor":"n)" + std::to_string(++endless_pages_sent_) + "\"}", std::nullopt};
  std::vector<const OrgTeamEntry*> matching;
  for (const auto& team : teams_) {
    const bool region_ok = regions.empty() || std::find(regions.begin(), regions.end(), team.region) != regions.end();
    if (region_ok && (!search || contains_ignoring_case(team.name, *search))) matching.push_back(&team);
  }
  size_t offset = 0;
  if (const auto cursor = param(request, "next_cursor")) {
    const std::string_view digits = std::string_view(*cursor).substr(std::min<size_t>(12, cursor->size()));
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), offset);
    if (!cursor->starts_with("teams-after-") || ec != std::errc() || end != digits.data() + digits.size() ||
        offset > matching.size()) {
      return detail(422, "invalid next_cursor");
    }
  }
  const size_t end = std::min(matching.size(), offset + team_page_size_);
  std::string body = "{\"teams\":[";
  for (size_t i = offset; i < end; ++i) {
    if (i > offset) body.push_back(',');
    json::ObjectWriter(body)
        .string("id", matching[i]->id)
        .string("name", matching[i]->name)
        .string("created_on", matching[i]->created_on)
        .string("region", matching[i]->region)
        .close();
  }
  body += "],\"next_cursor\":";
  if (end < matching.size()) {
    json::append_string(body, "teams-after-" + std::to_string(end));
  } else {
    body += "null";
  }
  return Reply{200, body + "}", std::nullopt};
}

Reply InterfaceEndpoints::bulk_export(const InterfaceRequest& request) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(simdjson::padded_string(request.body)).get_object().get(object)) {
    return detail(422, "body must be a JSON object");
  }
  std::string_view provider;
  if (object["provider"].get_string().get(provider)) return detail(422, "provider is required");
  if (!kBulkProviders.count(std::string(provider))) return detail(422, "provider is not supported for bulk export");
  if (std::lock_guard lock(mutex_); endless_pages_) {
    return Reply{200, R"({"data":[],"next_token":"tok)" + std::to_string(++endless_pages_sent_) + "\"}", std::nullopt};
  }
  std::optional<std::set<std::string>> users;
  simdjson::dom::element user_ids;
  if (!object["user_ids"].get(user_ids) && !user_ids.is_null()) {
    simdjson::dom::array items;
    if (user_ids.get_array().get(items)) return detail(422, "user_ids must be an array or null");
    users.emplace();
    for (auto item : items) {
      std::string_view id;
      if (item.get_string().get(id) || !fake_is_uuid(id)) return detail(422, "user_ids must be UUIDs");
      users->emplace(id);
    }
  }
  size_t offset = 0;
  simdjson::dom::element token;
  if (!object["next_token"].get(token) && !token.is_null()) {
    std::string_view text;
    if (token.get_string().get(text) || !text.starts_with("export-page-")) return detail(422, "invalid next_token");
    const std::string_view digits = text.substr(12);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), offset);
    if (ec != std::errc() || end != digits.data() + digits.size()) return detail(422, "invalid next_token");
  }
  std::lock_guard lock(mutex_);
  std::vector<std::string> matching;
  for (const std::string& recipe : connections_[std::string(provider)]) {
    simdjson::dom::parser recipe_parser;
    std::string_view id;
    if (recipe_parser.parse(simdjson::padded_string(recipe))["user_id"].get_string().get(id)) continue;
    if (!users || users->count(std::string(id))) matching.push_back(recipe);
  }
  const size_t end = std::min(matching.size(), offset + export_page_size_);
  std::string body = "{\"data\":[";
  for (size_t i = offset; i < end; ++i) body += (i > offset ? "," : "") + matching[i];
  body += "],\"next_token\":";
  body += end < matching.size() ? "\"export-page-" + std::to_string(end) + "\"" : std::string("null");
  return Reply{200, body + "}", std::nullopt};
}

Reply InterfaceEndpoints::bulk_import(const InterfaceRequest& request) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(simdjson::padded_string(request.body)).get_object().get(object)) {
    return detail(422, "body must be a JSON object");
  }
  std::string_view provider;
  if (object["provider"].get_string().get(provider)) return detail(422, "provider is required");
  if (!kBulkProviders.count(std::string(provider))) return detail(422, "provider is not supported for bulk import");
  simdjson::dom::array connections;
  if (object["connections"].get_array().get(connections)) return detail(422, "connections is required");
  bool wait = false;
  simdjson::dom::element wait_value;
  if (!object["wait_for_completion"].get(wait_value) && wait_value.get_bool().get(wait)) {
    return detail(422, "wait_for_completion must be a boolean");
  }
  std::vector<std::string> imported, failed;
  std::lock_guard lock(mutex_);
  for (auto connection : connections) {
    std::string_view user_id;
    if (connection["user_id"].get_string().get(user_id) || !fake_is_uuid(user_id)) {
      return detail(422, "every connection needs a user_id (UUID)");
    }
    (import_failures_.count(std::string(user_id)) ? failed : imported).emplace_back(user_id);
  }
  imported_.insert(imported_.end(), imported.begin(), imported.end());
  std::erase_if(imported, [&](const std::string& id) { return import_unlisted_.contains(id); });
  imported.insert(imported.end(), import_strangers_.begin(), import_strangers_.end());
  // "The submitted connections are enqueued … and the endpoint responds 202"; with
  // wait_for_completion, 200 when done within 20 s. The 202 body is not shown: not the lists.
  if (!wait || import_slow_) return detail(202, "Bulk import operation enqueued");
  return Reply{200,
               "{\"user_ids_imported\":" + string_array(imported) + ",\"user_ids_failed\":" + string_array(failed) + "}",
               std::nullopt};
}

Reply InterfaceEndpoints::upload_lab_report(const InterfaceRequest& request) {
  auto parts = parse_form(request.content_type, request.body);
  if (!parts) return detail(422, "expected multipart/form-data");
  const FormPart* file = nullptr;
  bool needs_review = false;
  for (const FormPart& part : *parts) {
    if (part.name == "file") file = &part;
    if (part.name == "needs_human_review") {
      if (part.bytes != "true" && part.bytes != "false") return detail(422, "needs_human_review must be a boolean");
      needs_review = part.bytes == "true";
    }
    if (part.name == "user_id" && !fake_is_uuid(part.bytes)) return detail(422, "user_id must be a UUID");
  }
  if (!file) return detail(422, "file is required");
  if (file->bytes.size() > kMaxReportBytes) return detail(413, "file is larger than 10 MB");
  if (sniffed_type(file->bytes).empty()) return detail(422, "file must be a PDF, JPEG or PNG");
  std::lock_guard lock(mutex_);
  last_upload_ = *parts;
  const std::string id = uuid_from(0x1ab0000 + ++jobs_made_, 'a');
  std::string body;
  json::ObjectWriter(body)
      .string("id", id)
      .string("status", "upload_pending")
      .null("failure_reason")
      .null("data")
      .boolean("needs_human_review", needs_review)
      .boolean("is_reviewed", false)
      .close();
  parsing_jobs_[id] = body;
  return Reply{200, body, std::nullopt};
}

Reply InterfaceEndpoints::get_parsing_job(const std::string& job_id) {
  std::lock_guard lock(mutex_);
  auto it = parsing_jobs_.find(job_id);
  if (it == parsing_jobs_.end()) return detail(404, "Parsing job not found");
  return Reply{200, it->second, std::nullopt};
}

Reply InterfaceEndpoints::lab_accounts(const InterfaceRequest& request) {
  const auto status = param(request, "status");
  const auto id = param(request, "lab_account_id");
  if (id && !fake_is_uuid(*id)) return detail(422, "lab_account_id must be a UUID");
  struct Account {
    const char* id;
    const char* lab;
    const char* status;
  };
  static constexpr Account kAccounts[] = {{"0b1c2d3e-4f50-4a61-8b72-93a4b5c6d7e8", "quest", "ACTIVE"},
                                          {"1c2d3e4f-5061-4b72-8c83-a4b5c6d7e8f9", "labcorp", "PENDING"}};
  std::string body = "{\"data\":[";
  bool first = true;
  for (const Account& account : kAccounts) {
    if ((status && *status != account.status) || (id && *id != account.id)) continue;
    if (!first) body.push_back(',');
    first = false;
    json::ObjectWriter(body).string("id", account.id).string("lab", account.lab).string("status", account.status).close();
  }
  return Reply{200, body + "]}", std::nullopt};
}

Reply InterfaceEndpoints::markers(const InterfaceRequest& request) {
  const auto lab = param(request, "lab_slug");
  std::string body = "{\"markers\":[";
  bool first = true;
  for (const auto& [slug, name, lab_slug] : {std::tuple{"glucose", "Glucose", "quest"},
                                             std::tuple{"hba1c", "Hemoglobin A1c", "labcorp"}}) {
    if (lab && *lab != lab_slug) continue;
    if (!first) body.push_back(',');
    first = false;
    json::ObjectWriter(body).string("slug", slug).string("name", name).string("lab_slug", lab_slug).close();
  }
  return Reply{200, body + "]}", std::nullopt};
}

Reply InterfaceEndpoints::area_info(const InterfaceRequest& request) {
  const auto zip = param(request, "zip_code");
  if (!zip || zip->size() != 5 || !std::all_of(zip->begin(), zip->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return detail(422, "zip_code must match ^\\d{5}$");
  }
  std::string radius = param(request, "radius").value_or("25");
  if (radius != "10" && radius != "20" && radius != "25" && radius != "50" && radius != "100") {
    return detail(422, "radius must be one of 10, 20, 25, 50, 100");
  }
  std::vector<std::string> labs = params(request, "labs");
  if (labs.empty()) labs = {"quest", "labcorp"};
  std::string body;
  json::ObjectWriter object(body);
  object.string("zip_code", *zip);
  object.raw("phlebotomy", R"({"is_served":true,"providers":[{"name":"getlabs","tier":["appointment-ready"]}]})");
  std::string central = "{";
  for (size_t i = 0; i < labs.size(); ++i) {
    if (i) central.push_back(',');
    json::append_string(central, labs[i]);
    central += ":{\"patient_service_centers\":{\"within_radius\":" + std::to_string(3 + i) + ",\"radius\":";
    json::append_string(central, radius);
    central += ",\"capabilities\":[\"stat\"]}}";
  }
  object.raw("central_labs", central + "}");
  object.close();
  return Reply{200, body, std::nullopt};
}

void InterfaceEndpoints::set_organization(std::string org_id, std::vector<OrgTeamEntry> teams, size_t page_size) {
  std::lock_guard lock(mutex_);
  org_id_ = std::move(org_id);
  teams_ = std::move(teams);
  team_page_size_ = std::max<size_t>(1, page_size);
}

void InterfaceEndpoints::set_link_code(std::optional<std::string> code) {
  std::lock_guard lock(mutex_);
  link_code_ = std::move(code);
}

void InterfaceEndpoints::set_connections(const std::string& provider, std::vector<std::string> recipes,
                                         size_t page_size) {
  std::lock_guard lock(mutex_);
  connections_[provider] = std::move(recipes);
  export_page_size_ = std::max<size_t>(1, page_size);
}

void InterfaceEndpoints::set_endless_pages(bool endless) {
  std::lock_guard lock(mutex_);
  endless_pages_ = endless;
}

void InterfaceEndpoints::set_import_failures(std::set<std::string> user_ids) {
  std::lock_guard lock(mutex_);
  import_failures_ = std::move(user_ids);
}

void InterfaceEndpoints::set_import_unlisted(std::set<std::string> user_ids) {
  std::lock_guard lock(mutex_);
  import_unlisted_ = std::move(user_ids);
}

void InterfaceEndpoints::set_import_strangers(std::vector<std::string> user_ids) {
  std::lock_guard lock(mutex_);
  import_strangers_ = std::move(user_ids);
}

void InterfaceEndpoints::set_import_slow(bool slow) {
  std::lock_guard lock(mutex_);
  import_slow_ = slow;
}

std::vector<std::string> InterfaceEndpoints::imported_user_ids() const {
  std::lock_guard lock(mutex_);
  return imported_;
}

void InterfaceEndpoints::set_parsing_job(const std::string& job_id, std::string body) {
  std::lock_guard lock(mutex_);
  parsing_jobs_[job_id] = std::move(body);
}

std::vector<FormPart> InterfaceEndpoints::last_upload() const {
  std::lock_guard lock(mutex_);
  return last_upload_;
}

}  // namespace hh::fake
