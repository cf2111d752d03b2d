#include "fetcher/page_owner.h"

#include <optional>
#include <string>

#include "common/json_scan.h"
#include "common/json_writer.h"
#include "common/uuid_text.h"

namespace hh::fetcher {
namespace {

// The page passed check_json: a scan that fails here is a bug, not the service's answer.
Error unreadable(std::string_view where) {
  return fail("unexpected body: cannot read " + (where.empty() ? std::string("the page") : std::string(where)));
}

// A JSON value's text that is a string, decoded; nullopt for any other value.
std::optional<std::string> string_value(std::string_view value) {
  if (json::first_byte(value) != '"') return std::nullopt;
  return json::decode_string(value);
}

// Calls visit(key, value) for each member of the object `text`, keys unescaped as the
// processor reads them; stops at the first failure. A value that is no object has none.
template <typename Visit>
Result<void> each_member(std::string_view text, std::string_view where, Visit&& visit) {
  json::Scanner scanner(text);
  scanner.skip_space();
  if (!scanner.skip('{')) return {};
  scanner.skip_space();
  if (scanner.skip('}')) return {};
  for (;;) {
    scanner.skip_space();
    const size_t key_start = scanner.offset();
    std::string_view written;
    if (!scanner.string(&written)) return unreadable(where);
    std::optional<std::string> decoded;
    std::string_view key = written;
    if (written.find('\\') != std::string_view::npos) {
      decoded = json::decode_string(text.substr(key_start, scanner.offset() - key_start));
      if (!decoded) return unreadable(where);
      key = *decoded;
    }
    scanner.skip_space();
    if (!scanner.skip(':')) return unreadable(where);
    scanner.skip_space();
    const size_t value_start = scanner.offset();
    if (!scanner.value(json::kSimdjsonMaxDepth)) return unreadable(where);
    if (auto visited = visit(key, text.substr(value_start, scanner.offset() - value_start)); !visited) {
      return visited;
    }
    scanner.skip_space();
    if (scanner.skip('}')) return {};
    if (!scanner.skip(',')) return unreadable(where);
  }
}

// Calls visit(index, value) for each element of the array `text`; stops at the first
// failure. A value that is no array has none.
template <typename Visit>
Result<void> each_element(std::string_view text, std::string_view where, Visit&& visit) {
  json::Scanner scanner(text);
  scanner.skip_space();
  if (!scanner.skip('[')) return {};
  scanner.skip_space();
  if (scanner.skip(']')) return {};
  for (size_t index = 0;; ++index) {
    scanner.skip_space();
    const size_t value_start = scanner.offset();
    if (!scanner.value(json::kSimdjsonMaxDepth)) return unreadable(where);
    if (auto visited = visit(index, text.substr(value_start, scanner.offset() - value_start)); !visited) {
      return visited;
    }
    scanner.skip_space();
    if (scanner.skip(']')) return {};
    if (!scanner.skip(',')) return unreadable(where);
  }
}

std::string element_path(std::string_view array, size_t index) {
  return std::string(array) + "[" + std::to_string(index) + "]";
}

// `member` of the object at `where` ("" the page itself).
std::string member_path(std::string_view where, std::string_view member) {
  return where.empty() ? std::string(member) : std::string(where) + "." + std::string(member);
}

// ", at sleep[0]"; nothing for the page itself.
std::string at(std::string_view where) { return where.empty() ? std::string() : ", at " + std::string(where); }

// The words of refresh's check (service_calls.cpp), and where in the page.
Result<void> check_user(const store::ClaimedJob& job, std::string_view value, std::string_view where) {
  const auto named = string_value(value);
  if (!named || named->empty() || same_uuid(*named, job.user_id)) return {};
  std::string error = "unexpected answer: user_id ";
  json::append_quoted_excerpt(error, *named);
  return fail(error + " is not the user asked for" + at(where));
}

Result<void> check_provider(const store::ClaimedJob& job, const std::optional<std::string>& named,
                            std::string_view where) {
  if (!named || named->empty() || job.provider.empty() || *named == job.provider) return {};
  std::string error = "unexpected answer: provider ";
  json::append_quoted_excerpt(error, *named);
  return fail(error + " is not the provider asked for" + at(where));
}

// A `source`: an object whose provider or (deprecated) slug names the provider, or a bare
// slug string (events/source_fields.h).
Result<void> check_source(const store::ClaimedJob& job, std::string_view value, const std::string& where) {
  if (json::first_byte(value) == '"') return check_provider(job, string_value(value), where);
  return each_member(value, where, [&](std::string_view key, std::string_view member) -> Result<void> {
    if (key != "provider" && key != "slug") return {};
    return check_provider(job, string_value(member), member_path(where, key));
  });
}

// One summary (a list's item, or the profile object).
Result<void> check_summary(const store::ClaimedJob& job, std::string_view item, const std::string& where) {
  return each_member(item, where, [&](std::string_view key, std::string_view value) -> Result<void> {
    if (key == "user_id") return check_user(job, value, where);
    if (key == "source") return check_source(job, value, member_path(where, "source"));
    if (key == "source_provider") return check_provider(job, string_value(value), member_path(where, "source_provider"));
    return {};
  });
}

// {"groups": {"<provider>": [{"source": {…}, "data": […]}, …]}, "next_cursor": …}
Result<void> check_groups(const store::ClaimedJob& job, std::string_view groups) {
  return each_member(groups, "groups", [&](std::string_view provider, std::string_view list) -> Result<void> {
    const std::string where = "groups." + std::string(provider);
    if (auto named = check_provider(job, std::string(provider), where); !named) return named;
    return each_element(list, where, [&](size_t index, std::string_view group) -> Result<void> {
      const std::string path = element_path(where, index);
      return each_member(group, path, [&](std::string_view key, std::string_view value) -> Result<void> {
        if (key == "user_id") return check_user(job, value, path);
        if (key == "source") return check_source(job, value, member_path(path, "source"));
        return {};  // data: samples name neither user nor provider
      });
    });
  });
}

}  // namespace

Result<void> check_page_owner(const store::ClaimedJob& job, const PagePlan& page, std::string_view body) {
  if (job.kind != store::kKindBackfill) return {};
  if (page.body_array.empty()) return check_summary(job, body, "");  // the profile: one object
  return each_member(body, "", [&](std::string_view key, std::string_view value) -> Result<void> {
    if (key == "user_id") return check_user(job, value, "");
    if (key != page.body_array) return {};
    if (key == "groups") return check_groups(job, value);
    return each_element(value, key, [&](size_t index, std::string_view item) -> Result<void> {
      return check_summary(job, item, element_path(key, index));
    });
  });
}

}  // namespace hh::fetcher
