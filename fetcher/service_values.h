#pragma once
// The values of the service's interface (its documented enums and patterns) that commands
// check their input against before they send a request or queue a fetch: user ids are
// UUIDs; resources come from the Provider's `supported_resources` list, providers from
// the enum of DELETE /v2/user/{user_id}/{provider}. Both enums are non-exhaustive, so a
// value not listed here may still be real: callers warn and go on, they do not refuse.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/uuid_text.h"

namespace hh::fetcher {

using hh::is_uuid;    // common/uuid_text.h
using hh::same_uuid;

// A value of the interface's `supported_resources` list.
bool is_listed_resource(std::string_view resource);

// A listed resource that is not data (connections, devices, lab records): the service has
// no read endpoint that a backfill could page through for it.
bool is_record_resource(std::string_view resource);

// A value of the interface's provider enum (deregistration).
bool is_listed_provider(std::string_view provider);

// Most pages read along one chain of cursors: a backfill job (job_runner.h), the teams
// listing, a bulk export. A service whose cursor never ends (a new one on every page; one
// that comes back is caught at once) would be read for ever. A timeseries backfill's chain
// is its window's pages (a year of a timeseries is a few hundred); an organization's teams
// and a provider's connections come in far fewer pages too: 10,000 is far past any, and
// bounded. A summary backfill's 30-day steps follow no cursor and are not counted: they end
// with the window (job_runner.cpp).
inline constexpr int64_t kMaxCursorPages = 10'000;

// What a chain that reached `max_pages` says: "more than 10000 pages, each with a new
// <cursor_name>: the service's pages never end".
std::string endless_pages_error(int64_t max_pages, std::string_view cursor_name);

}  // namespace hh::fetcher
