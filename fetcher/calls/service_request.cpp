#include "fetcher/calls/service_request.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "common/json_writer.h"
#include "common/redaction.h"
#include "fetcher/base_url.h"
#include "fetcher/fetcher.h"

namespace hh::fetcher {
namespace {

namespace net = boost::asio;

constexpr size_t kReasonChars = 300;  // of the service's answer to a failed call

std::string_view method_name(Method method) {
  switch (method) {
    case Method::get: return "GET";
    case Method::post: return "POST";
    case Method::patch: return "PATCH";
    case Method::delete_: return "DELETE";
  }
  return "?";
}

// The service's reason for a failed call, on one line of printable text.
std::string reason(std::string_view body) {
  std::string out;
  for (const char c : body.substr(0, kReasonChars)) {
    out.push_back(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f ? c : ' ');
  }
  if (body.size() > kReasonChars) out += "...";
  return out;
}

}  // namespace

// The client follows no redirect, so a redirect says the base URL is not where the service
// answers; a 304 answers a cache check no request makes: not a redirect but a fault of the
// service or of a proxy.
std::string status_hint(unsigned status, std::string_view base_url_setting) {
  if (status == 304) return " (unexpected: \"not modified\" to a request that asked for no cache check)";
  if (status / 100 == 3) return " (redirects are not followed; check " + std::string(base_url_setting) + ")";
  return {};
}

std::string over_document_limit(size_t bytes, size_t limit) {
  return "answer of " + std::to_string(bytes) + " bytes, over the " + std::to_string(limit) +
         " the parser takes in one document";
}

std::string quoted_value(std::string_view text, size_t max_chars) {
  // Text that is UTF-8 is shown as written ("１０００１", "Zürich"), cut between characters;
  // other bytes, and control characters (C0, DEL, C1: a terminal would act on them), as '?'.
  const bool utf8 = json::is_valid_utf8(text);
  size_t cut = std::min(max_chars, text.size());
  while (utf8 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out = "\"";
  for (size_t i = 0; i < cut; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = utf8 && c == 0xC2 && i + 1 < cut && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (c1) {
      out.push_back('?');
      ++i;
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) {
      out.push_back('?');
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (cut < text.size()) out += "...";
  return out + "\"";
}

Result<ServiceReply> call_service(const ServiceAccess& access, const ServiceCall& call) {
  auto base = BaseUrl::parse(access.service.base_url);
  if (!base) return fail(ErrorKind::data, "base URL: " + base.error());
  std::vector<std::string_view> segments(call.segments.begin(), call.segments.end());
  auto path = build_path(*base, segments);
  if (!path) return fail(ErrorKind::data, path.error());
  std::vector<std::pair<std::string_view, std::string_view>> query(call.query.begin(), call.query.end());
  const std::string target = query.empty() ? std::move(*path) : with_query(std::move(*path), query);
  ServiceReply reply;
  reply.request = std::string(method_name(call.method)) + " " + base->full_url(target);

  FetcherOptions options;  // only for the client settings derived from [service]
  options.service = access.service;
  options.api_key = access.api_key;
  options.base_dir = access.base_dir;
  ClientOptions client_settings = client_options(options);
  if (call.read_timeout) client_settings.read_timeout = std::max(client_settings.read_timeout, *call.read_timeout);
  net::io_context io;
  auto client = HttpsClient::create(io.get_executor(), *base, std::move(client_settings));
  if (!client) return fail(ErrorKind::data, client.error());
  std::optional<FetchResult> result;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        auto operation = call.method == Method::get ? (*client)->get(target)
                                                    : (*client)->send(call.method, target, call.body);
        result = co_await std::move(operation);
        (*client)->close_all();  // no idle connection left to keep io.run() going
      },
      net::detached);
  io.run();

  if (!result) return fail(ErrorKind::io, reply.request + ": no result");
  if (result->failure != FetchFailure::none) {
    return fail(ErrorKind::io, reply.request + ": " + std::string(failure_name(result->failure)) + ": " +
                                   redacted(result->error, call.redact));
  }
  if (result->status == 401) {
    return fail(reply.request + ": HTTP 401: the service refused the " + access.key_name);
  }
  if (result->status / 100 != 2) {
    const std::string why =
        reason(redacted(result->body, call.redact, result->body_cut ? TextEnd::cut_short : TextEnd::whole));
    if (result->status == 403) {
      // Forbidden is not always the key: a feature not enabled for the team (bulk import,
      // the lab report parser) says so in its reason, which is shown.
      return fail(reply.request + ": HTTP 403: " +
                  (why.empty() ? "the service refused the " + access.key_name
                               : why + " (the service refused this " + access.key_name + "'s request)"));
    }
    return fail(reply.request + ": HTTP " + std::to_string(result->status) + (why.empty() ? "" : ": " + why) +
                status_hint(result->status, access.base_url_setting));
  }
  reply.status = result->status;
  reply.body = std::move(result->body);
  return reply;
}

}  // namespace hh::fetcher
