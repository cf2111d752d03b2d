#include "cli/deregistration_record.h"

#include "app/store_settings.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "processor/processor.h"
#include "store/open_store.h"

namespace hh::cli {

Result<RecordedDeregistration> record_deregistration(const config::Settings& settings, std::string_view user_id,
                                                     std::string_view provider, std::string_view url, int64_t at_ms) {
  auto database = app::database(settings);
  if (!database) return fail(database);
  auto options = app::store_options(settings);
  if (!options) return fail(options);
  auto store = store::open_store(*database, *options);
  if (!store) return fail(store);
  auto inbox = (*store)->open_inbox();
  if (!inbox) return fail(inbox);

  store::NewDelivery row;
  row.message_id = "deregistration:" + std::string(user_id) + "/" + std::string(provider) + "/" + std::to_string(at_ms);
  row.origin = store::Origin::fetch;
  row.received_at_ms = at_ms;
  row.event_type = "fetch.deregistration";
  json::ObjectWriter(row.headers_json)
      .string("kind", "deregistration")
      .string("user_id", user_id)
      .string("provider", provider)
      .string("deregistered_at", format_rfc3339_ms(at_ms))
      .string("url", url)
      .close();
  row.body = "{\"success\":true}";
  const store::NewDelivery* batch[] = {&row};
  auto appended = (*inbox)->append(batch);
  if (!appended) return fail(appended);
  RecordedDeregistration recorded;
  recorded.seq = appended->at(0).seq;

  // Apply it now when no other process applies this inbox; else that process will.
  auto processing = (*store)->open_processing(store::Leadership::now);
  if (!processing) {
    if (processing.error_kind() != ErrorKind::in_use) recorded.not_applied_because = processing.error();
    return recorded;
  }
  auto applier = processor::Processor::create(std::move(*processing), processor::kCatchUpSteps);
  if (!applier) return fail(applier);
  if (auto done = (*applier)->run_until_caught_up(nullptr); !done) return fail(done);
  recorded.applied = true;
  return recorded;
}

}  // namespace hh::cli
