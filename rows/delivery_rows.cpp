#include "rows/delivery_rows.h"

namespace hh::rows {

// The names stored in deliveries.family / deliveries.status (001-inbox.sql).
std::string_view family_name(Family family) {
  switch (family) {
    case Family::summary: return "summary";
    case Family::timeseries: return "timeseries";
    case Family::workout_stream: return "workout_stream";
    case Family::backfill: return "backfill";
    case Family::connection: return "connection";
    case Family::device: return "device";
    case Family::lab_order: return "lab_order";
    case Family::lab_appointment: return "lab_appointment";
    case Family::lab_result: return "lab_result";
    case Family::lab_parsing_job: return "lab_parsing_job";
    case Family::hypnogram: return "hypnogram";
    case Family::match_review: return "match_review";
    case Family::sleep_stream: return "sleep_stream";
    case Family::device_legacy: return "device_legacy";
    case Family::other: return "other";
    case Family::fetched_stream: return "fetched_stream";
    case Family::fetched_summaries: return "fetched_summaries";
    case Family::fetched_timeseries: return "fetched_timeseries";
    case Family::fetched_providers: return "fetched_providers";
    case Family::fetched_parsing_job: return "fetched_parsing_job";
    case Family::fetched_deregistration: return "fetched_deregistration";
  }
  return "other";
}

std::string_view status_name(Status status) {
  switch (status) {
    case Status::processed: return "processed";
    case Status::invalid: return "invalid";
    case Status::ignored: return "ignored";
    case Status::unknown: return "unknown";
  }
  return "invalid";
}

void DeliveryRows::clear() {
  family = Family::other;
  identity = Identity{};
  delivery_user.reset();
  summaries.clear();
  sample_batches.clear();
  workout_stream.reset();
  backfill.reset();
  connection.reset();
  device.reset();
  lab_order.reset();
  lab_appointment.reset();
  lab_result.reset();
  lab_parsing_job.reset();
  deregistration.reset();
  fetched_stream.reset();
  providers.clear();
  workout_ids_to_fetch.clear();
}

}  // namespace hh::rows
