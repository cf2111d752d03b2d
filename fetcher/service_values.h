#pragma once
// The values of the service's interface (its documented enums and patterns) that commands
// check their input against before they send a request or queue a fetch: user ids are
// UUIDs; resources come from the Provider's `supported_resources` list, providers from
// the enum of DELETE /v2/user/{user_id}/{provider}. Both enums are non-exhaustive, so a
// value not listed here may still be real: callers warn and go on, they do not refuse.
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

}  // namespace hh::fetcher
