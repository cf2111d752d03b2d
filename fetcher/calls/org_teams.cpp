#include "fetcher/calls/org_teams.h"

#include <simdjson.h>

#include <map>
#include <set>

#include "common/uuid_text.h"
#include "fetcher/service_values.h"

namespace hh::fetcher {
namespace {

// One code point of `text` at `at` (advanced past it); nullopt for bytes that are not UTF-8.
std::optional<char32_t> next_code_point(std::string_view text, size_t& at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || at + length > text.size()) return std::nullopt;
  char32_t value = length == 1 ? lead : lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return std::nullopt;
    value = (value << 6) | (byte(at + i) & 0x3f);
  }
  static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return std::nullopt;
  at += length;
  return value;
}

// Unicode White_Space: what \s matches in a Unicode pattern.
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

bool allowed_in_search(char32_t c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  if ((c >= 0xc0 && c <= 0xd6) || (c >= 0xd8 && c <= 0xf6) || (c >= 0xf8 && c <= 0xff)) return true;
  if (c < 0x80 && std::string_view("(),/:'|&_-").find(static_cast<char>(c)) != std::string_view::npos) return true;
  return c == 0x2019 || is_white_space(c);
}

bool same_team(const OrgTeam& first, const OrgTeam& second) {
  return first.name == second.name && first.created_on == second.created_on && first.region == second.region;
}

}  // namespace

std::string team_search_problem(std::string_view text) {
  size_t at = 0, characters = 0;
  while (at < text.size()) {
    const auto c = next_code_point(text, at);
    if (!c) return "not valid UTF-8";
    if (!allowed_in_search(*c)) {
      return "character " + std::to_string(characters + 1) +
             " is not allowed (letters, digits, white space and ( ) , / : ' | & _ - only)";
    }
    ++characters;
  }
  if (characters > kTeamSearchMaxChars) {
    return std::to_string(characters) + " characters, at most " + std::to_string(kTeamSearchMaxChars);
  }
  return {};
}

Result<std::vector<OrgTeam>> list_org_teams(const ServiceAccess& management, std::string_view org_id,
                                            const TeamListing& listing) {
  if (!is_uuid(org_id)) return fail(ErrorKind::data, "management.org_id: " + quoted_value(org_id) + " is not a UUID");
  std::vector<OrgTeam> teams;
  std::optional<std::string> cursor;
  std::set<std::string> cursors_seen;
  std::map<std::string, size_t> position_of_team;  // uuid_key(id) -> index in `teams`
  simdjson::dom::parser parser;
  for (int64_t page = 1;; ++page) {
    ServiceCall call;
    call.segments = {"v1", "org", std::string(org_id), "team"};
    for (const std::string& region : listing.regions) call.query.emplace_back("region", region);
    if (listing.search) call.query.emplace_back("search_query", *listing.search);
    if (cursor) call.query.emplace_back("next_cursor", *cursor);
    auto reply = call_service(management, call);
    if (!reply) return fail(reply);

    const std::string unexpected = reply->request + ": unexpected answer: ";
    const simdjson::padded_string padded(reply->body);
    simdjson::dom::object object;
    if (parser.parse(padded).get_object().get(object)) return fail(unexpected + "not a JSON object");
    simdjson::dom::array items;
    if (object["teams"].get_array().get(items)) return fail(unexpected + "teams: missing or not an array");
    size_t index = 0;
    for (auto item : items) {
      OrgTeam team;
      for (auto [key, field] : {std::pair{"id", &team.id}, std::pair{"name", &team.name},
                                std::pair{"created_on", &team.created_on}, std::pair{"region", &team.region}}) {
        std::string_view text;
        if (item[key].get_string().get(text)) {
          return fail(unexpected + "teams[" + std::to_string(index) + "]." + key + ": missing or not a string");
        }
        *field = std::string(text);
      }
      // The interface's team id is a UUID; `teams --as-config` writes it into a file name and
      // the configuration, where "../../etc" would name another folder.
      if (!is_uuid(team.id)) {
        return fail(unexpected + "teams[" + std::to_string(index) + "].id: " + quoted_value(team.id) + " is not a UUID");
      }
      // A team twice (pages that overlap while teams are added, or a fault of the service):
      // the same team is kept once, since a configuration with an id twice is refused. If
      // the two differ, which one is current cannot be told: fail, a new listing decides.
      const auto [at, added] = position_of_team.emplace(uuid_key(team.id), teams.size());
      if (added) {
        teams.push_back(std::move(team));
      } else if (!same_team(teams[at->second], team)) {
        return fail(unexpected + "teams[" + std::to_string(index) + "]: team " + quoted_value(team.id) +
                    " came twice with different fields (the list changed while paging; run it again)");
      }
      ++index;
    }
    simdjson::dom::element next;
    if (object["next_cursor"].get(next)) return fail(unexpected + "next_cursor: missing");
    if (next.is_null()) return teams;
    std::string_view text;
    if (next.get_string().get(text)) return fail(unexpected + "next_cursor: neither a string nor null");
    if (text.empty()) return teams;
    if (!cursors_seen.emplace(text).second) return fail(unexpected + "next_cursor " + quoted_value(text) + " came twice");
    if (page >= listing.max_pages) return fail(reply->request + ": " + endless_pages_error(listing.max_pages, "next_cursor"));
    cursor = std::string(text);
  }
}

}  // namespace hh::fetcher
