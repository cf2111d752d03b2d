#pragma once
// One request of a command to the service (or to its management endpoint), start to end:
// the URL from the base URL and path segments, the key header, an optional body, the
// fetcher's HTTPS client (https_client.h: TLS checks, deadlines, size limit) on an
// io_context of the call's own. Blocking; nothing is retried, since most of these calls
// change something on the service. The modules beside this file build each endpoint's
// request and read its answer; the commands (cli/) only check input and print.
//
// Errors are one line naming the method and URL (never the key, never a value listed in
// `redact`): ErrorKind::data when the request cannot be built (base URL, a path segment),
// ErrorKind::io when no response arrived (connect, TLS, timeout), and ErrorKind::other
// for a non-2xx status, with the service's reason (its body, shortened to one line).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "config/settings.h"
#include "fetcher/https_client.h"

namespace hh::fetcher {

// What a call needs from the configuration: a team's base URL and key ([service] or a
// [[service.teams]] entry), or the management endpoint's ([management]).
struct ServiceAccess {
  config::ServiceSettings service;  // base URL, key header, CA file, deadlines, size limit
  std::string api_key;              // config/secrets.h; never logged or printed
  std::string base_dir = ".";       // a relative service.ca_file is read from here (the config's folder)
  std::string key_name = "API key";  // in the message of a 401/403: "the service refused the <key_name>"
  // The setting the base URL came from, named when the service answers a redirect.
  std::string base_url_setting = "service.base_url";
};

// What follows "HTTP <status>" for a 3xx: the redirect is not followed (check
// `base_url_setting`), or a 304 is unexpected; empty for any other status.
std::string status_hint(unsigned status, std::string_view base_url_setting);

// Why an answer of `bytes` is not taken when one JSON document may be at most `limit`
// bytes (events::ParseLimits::max_document_bytes): the same words from a follow-up job
// and from a command that reads the same answer.
std::string over_document_limit(size_t bytes, size_t limit);

struct ServiceCall {
  Method method = Method::get;
  std::vector<std::string> segments;                        // the path below the base URL, each percent-encoded
  std::vector<std::pair<std::string, std::string>> query;  // a key may repeat (an array parameter)
  std::optional<RequestBody> body;
  // At least this long a wait for the answer's bytes (a call the service may hold, such as
  // a refresh or a bulk import that waits for completion); default service.read_timeout_s.
  std::optional<std::chrono::milliseconds> read_timeout;
  // Values the body carries that must never appear in an error (OAuth tokens): replaced
  // by "[redacted]" in the service's reason (common/redaction.h).
  std::vector<std::string> redact;
};

struct ServiceReply {
  unsigned status = 0;  // 2xx
  std::string body;
  std::string request;  // "METHOD URL", for messages about the answer
};

Result<ServiceReply> call_service(const ServiceAccess& access, const ServiceCall& call);

// `text` quoted for an error line: printable text kept (UTF-8 included), control characters
// and bytes that are not UTF-8 '?', cut after `max_chars` bytes (between characters).
// Input echoed back to a user goes through this.
std::string quoted_value(std::string_view text, size_t max_chars = 80);

}  // namespace hh::fetcher
