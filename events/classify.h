#pragma once
// Event type → what kind of payload to expect (spec §3, reference notes §1). Only the
// event type is looked at here; for daily/historical data events the shape of $.data
// decides between summary, timeseries and backfill (parse_resource_data.cpp).
#include <string_view>

namespace hh::events {

enum class EventKind {
  resource_data,       // daily.data.<r>.created|updated, historical.data.<r>.created
  connection_created,  // provider.connection.created
  connection_error,    // provider.connection.error
  device,              // provider.device.*
  lab_order,           // labtest.order.*
  lab_appointment,     // labtest.appointment.*
  lab_result,          // labtest.result.critical
  lab_parsing_job,     // lab_report.parsing_job.*
  hypnogram,           // *.timeseries.hypnogram.*, daily|historical.data.hypnogram.*: deprecated
  // A resource the interface lists without showing its payload (known_resources.h):
  // daily|historical.data.<r>.* for such an r, labtest.match_review.*,
  // provider.device_legacy.*. Stored and classified, not parsed.
  unshown_resource,
  other,               // ping, continuous_query.*, message.attempt.exhausted, …
};

struct EventClass {
  EventKind kind = EventKind::other;
  std::string_view resource;  // resource_data, unshown_resource: the resource named
  bool historical = false;    // resource_data: historical.data.*
};

// `event_type` must stay alive while the result is used (resource points into it).
EventClass classify_event_type(std::string_view event_type);

}  // namespace hh::events
