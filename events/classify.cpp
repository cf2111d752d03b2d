#include "events/classify.h"

#include <array>

#include "events/known_resources.h"

namespace hh::events {
namespace {

// Splits "a.b.c.d" into at most 6 parts; count says how many there were (capped at 7 so
// "more than 6" is visible).
struct DotParts {
  std::array<std::string_view, 6> part;
  size_t count = 0;
};

DotParts split_dots(std::string_view text) {
  DotParts out;
  size_t start = 0;
  while (true) {
    const size_t dot = text.find('.', start);
    const std::string_view piece = text.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (out.count < out.part.size()) out.part[out.count] = piece;
    ++out.count;
    if (dot == std::string_view::npos || out.count > out.part.size()) break;
    start = dot + 1;
  }
  return out;
}

}  // namespace

EventClass classify_event_type(std::string_view event_type) {
  const DotParts p = split_dots(event_type);
  EventClass out;

  // Deprecated hypnogram events, in whatever position the old naming put "timeseries".
  for (size_t i = 0; i + 1 < p.count && i + 1 < p.part.size(); ++i) {
    if (p.part[i] == "timeseries" && p.part[i + 1] == "hypnogram") {
      out.kind = EventKind::hypnogram;
      return out;
    }
  }

  if (p.count == 4 && p.part[1] == "data" && !p.part[2].empty()) {
    const bool daily = p.part[0] == "daily" && (p.part[3] == "created" || p.part[3] == "updated");
    const bool historical = p.part[0] == "historical" && p.part[3] == "created";
    if (daily || historical) {
      out.kind = p.part[2] == "hypnogram"                   ? EventKind::hypnogram
                 : unshown_resource_family(p.part[2]).has_value() ? EventKind::unshown_resource
                                                                 : EventKind::resource_data;
      out.resource = p.part[2];
      out.historical = historical;
      return out;
    }
    return out;
  }

  if (p.count == 3) {
    if (p.part[0] == "provider") {
      if (p.part[1] == "connection" && p.part[2] == "created") out.kind = EventKind::connection_created;
      else if (p.part[1] == "connection" && p.part[2] == "error") out.kind = EventKind::connection_error;
      else if (p.part[1] == "device") out.kind = EventKind::device;
      else if (p.part[1] == "device_legacy") out.kind = EventKind::unshown_resource;
    } else if (p.part[0] == "labtest") {
      if (p.part[1] == "order") out.kind = EventKind::lab_order;
      else if (p.part[1] == "appointment") out.kind = EventKind::lab_appointment;
      else if (p.part[1] == "result" && p.part[2] == "critical") out.kind = EventKind::lab_result;
      else if (p.part[1] == "match_review") out.kind = EventKind::unshown_resource;
    } else if (p.part[0] == "lab_report" && p.part[1] == "parsing_job") {
      out.kind = EventKind::lab_parsing_job;
    }
    if (out.kind == EventKind::unshown_resource) out.resource = p.part[1];
  }
  return out;
}

}  // namespace hh::events
