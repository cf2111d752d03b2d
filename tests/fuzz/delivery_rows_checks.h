#pragma once
// Invariants of a DeliveryParser result that the fuzz targets check after every parse
// (events/delivery_parser.h and event_rows.h state them):
//  - an invalid row carries an error and no rows (a delivery applies whole or not at all);
//  - every view in the rows is readable now (AddressSanitizer catches a dangling one) and
//    is valid UTF-8 (simdjson's stage 1 validated the whole document);
//  - every stored JSON text (data_json, raw members, extra_json) is valid JSON on its own,
//    which JsonReader promises even for members it only skipped over.
// A broken invariant aborts, so libFuzzer reports it like a crash.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "common/json_scan.h"
#include "common/json_writer.h"
#include "events/delivery_parser.h"

namespace hh::fuzz {

[[noreturn]] inline void broken(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "invariant broken: %s: %.*s\n", what, static_cast<int>(detail.size() > 200 ? 200 : detail.size()),
               detail.data());
  std::abort();
}

inline void check_text(std::string_view text, const char* what) {
  if (!json::is_valid_utf8(text)) broken(what, "not valid UTF-8");
}
inline void check_text(const std::optional<std::string_view>& text, const char* what) {
  if (text) check_text(*text, what);
}
inline void check_json_text(std::string_view text, const char* what) {
  check_text(text, what);
  if (auto valid = json::check_json(text, 1024); !valid) broken(what, valid.error());
}
inline void check_json_text(const std::optional<std::string_view>& text, const char* what) {
  if (text) check_json_text(*text, what);
}

inline bool has_rows(const rows::DeliveryRows& rows) {
  return !rows.summaries.empty() || !rows.sample_batches.empty() || rows.workout_stream || rows.backfill ||
         rows.connection || rows.device || rows.lab_order || rows.lab_appointment || rows.lab_result ||
         rows.lab_parsing_job || rows.deregistration || rows.fetched_stream || !rows.workout_ids_to_fetch.empty() || !rows.providers.empty() ||
         rows.identity.user_id || rows.identity.client_user_id || rows.identity.team_id;
}

inline void check_parse(const events::ParseResult& result, const rows::DeliveryRows& rows) {
  if (result.family != rows.family) broken("result.family differs from rows.family");
  if (result.status == rows::Status::invalid) {
    if (result.error.empty()) broken("invalid without an error");
    if (has_rows(rows)) broken("invalid row kept rows", result.error);
    return;
  }
  if (!result.error.empty()) broken("error set on a row that is not invalid", result.error);

  for (const auto& s : rows.summaries) {
    check_text(s.resource, "summary.resource");
    check_text(s.id, "summary.id");
    check_text(s.user_id, "summary.user_id");
    check_text(s.provider, "summary.provider");
    check_text(s.source_type, "summary.source_type");
    check_text(s.app_id, "summary.app_id");
    check_text(s.provider_id, "summary.provider_id");
    check_text(s.sport, "summary.sport");
    check_text(s.calendar_date, "summary.calendar_date");
    check_json_text(s.data_json, "summary.data_json");
  }
  for (const auto& batch : rows.sample_batches) {
    if (batch.user_id.empty()) broken("sample batch without user_id");
    check_text(batch.user_id, "batch.user_id");
    check_text(batch.resource, "batch.resource");
    check_text(batch.provider, "batch.provider");
    check_text(batch.source_type, "batch.source_type");
    check_text(batch.app_id, "batch.app_id");
    for (const auto& sample : batch.samples) {
      if (const auto* text = std::get_if<std::string_view>(&sample.value)) check_text(*text, "sample.value");
      check_text(sample.unit, "sample.unit");
      check_text(sample.type, "sample.type");
      if (!sample.extra_json.empty()) {
        check_json_text(std::string_view(sample.extra_json), "sample.extra_json");
        if (sample.extra_json.front() != '{') broken("sample.extra_json is not an object", sample.extra_json);
      }
    }
  }
  if (const auto& w = rows.workout_stream) {
    check_text(w->workout_id, "workout_stream.workout_id");
    if (!w->user_id) broken("workout_stream without user_id");
    check_text(w->user_id, "workout_stream.user_id");
    check_text(w->provider, "workout_stream.provider");
    check_text(w->provider_id, "workout_stream.provider_id");
    check_text(w->sport, "workout_stream.sport");
  }
  if (const auto& b = rows.backfill) {
    if (b->user_id.empty()) broken("backfill without user_id");
    check_text(b->user_id, "backfill.user_id");
    check_text(b->resource, "backfill.resource");
    check_text(b->provider, "backfill.provider");
  }
  if (const auto& c = rows.connection) {
    if (c->user_id.empty()) broken("connection without user_id");
    check_text(c->user_id, "connection.user_id");
    check_text(c->provider, "connection.provider");
    check_text(c->status, "connection.status");
    check_text(c->external_user_id, "connection.external_user_id");
    check_text(c->error_type, "connection.error_type");
    check_text(c->error_message, "connection.error_message");
    check_json_text(c->resource_availability_json, "connection.resource_availability_json");
    check_text(c->event_type, "connection.event_type");
    check_json_text(c->data_json, "connection.data_json");
  }
  if (const auto& d = rows.deregistration) {
    if (d->user_id.empty() || d->provider.empty()) broken("deregistration without user_id or provider");
    check_text(d->user_id, "deregistration.user_id");
    check_text(d->provider, "deregistration.provider");
    check_text(d->event_type, "deregistration.event_type");
    check_json_text(d->data_json, "deregistration.data_json");
  }
  if (const auto& d = rows.device) {
    check_text(d->id, "device.id");
    for (const auto& field : {d->user_id, d->provider, d->source_type, d->app_id, d->device_manufacturer,
                              d->device_model, d->device_version, d->device_id}) {
      check_text(field, "device field");
    }
    check_json_text(d->data_json, "device.data_json");
  }
  if (const auto& o = rows.lab_order) {
    check_text(o->id, "lab_order.id");
    for (const auto& field : {o->user_id, o->team_id, o->status, o->last_event_status, o->status_detail,
                              o->interpretation}) {
      check_text(field, "lab_order field");
    }
    check_json_text(o->data_json, "lab_order.data_json");
  }
  if (const auto& a = rows.lab_appointment) {
    check_text(a->id, "lab_appointment.id");
    for (const auto& field : {a->order_id, a->user_id, a->status, a->event_status, a->start_at, a->end_at}) {
      check_text(field, "lab_appointment field");
    }
    check_json_text(a->data_json, "lab_appointment.data_json");
  }
  if (const auto& r = rows.lab_result) {
    check_text(r->order_id, "lab_result.order_id");
    for (const auto& field : {r->user_id, r->sample_id, r->status, r->interpretation}) {
      check_text(field, "lab_result field");
    }
    check_json_text(r->data_json, "lab_result.data_json");
  }
  if (const auto& j = rows.lab_parsing_job) {
    check_text(j->id, "lab_parsing_job.id");
    check_text(j->status, "lab_parsing_job.status");
    check_text(j->failure_reason, "lab_parsing_job.failure_reason");
    check_json_text(j->results_json, "lab_parsing_job.results_json");
    check_json_text(j->data_json, "lab_parsing_job.data_json");
  }
  for (const auto id : rows.workout_ids_to_fetch) check_text(id, "workout_ids_to_fetch");
  for (const auto& p : rows.providers) {
    if (p.slug.empty()) broken("provider without slug");
    check_text(p.slug, "provider.slug");
    for (const auto& field : {p.name, p.description, p.logo, p.auth_type}) check_text(field, "provider field");
    check_json_text(p.supported_resources_json, "provider.supported_resources_json");
    check_json_text(p.data_json, "provider.data_json");
  }
  // Identity: a user is named whenever a client or team id is kept.
  if ((rows.identity.client_user_id || rows.identity.team_id) && !rows.identity.user_id &&
      result.status == rows::Status::processed) {
    broken("identity without user_id");
  }
  for (const auto& field : {rows.identity.user_id, rows.identity.client_user_id, rows.identity.team_id}) {
    check_text(field, "identity field");
  }
  for (const auto& batch : rows.sample_batches) {
    if (const auto* text = std::get_if<std::string_view>(&batch.source_id)) check_text(*text, "batch.source_id");
  }
}

}  // namespace hh::fuzz
