#include "app/ingest.h"

#include <algorithm>

#include "app/store_settings.h"
#include "common/log.h"
#include "store/open_store.h"

namespace hh::app {

Result<std::unique_ptr<Ingest>> open_ingest(const config::Settings& settings, const config::Secrets& secrets) {
  auto ingest = std::make_unique<Ingest>();
  ingest->database = database(settings, secrets);
  auto options = serve_store_options(settings);
  if (!options) return fail(options);
  auto store = store::open_store(ingest->database, *options);
  if (!store) return fail(store);
  ingest->store = std::move(*store);
  auto inbox = ingest->store->open_inbox();
  if (!inbox) return fail(inbox);
  ingest->inbox = std::move(*inbox);

  store::WriterOptions& writer_options = ingest->writer_options;
  writer_options.high_water = static_cast<size_t>(settings.queue_high_water);
  writer_options.disk_path = ingest->store->local_folder();
  writer_options.min_free_disk_bytes = static_cast<uint64_t>(settings.min_free_disk_mib) * 1024 * 1024;
  if (!ingest->store->shared()) writer_options.max_database_mib = settings.max_database_mib;  // a SQLite file's cap
  // Stalled once the deliveries waiting on it get their 503 (whichever deadline comes first),
  // and never before a second: a busy timeout set low must not turn an ordinary commit of a
  // few large bodies into "not ready".
  writer_options.stalled_commit = std::chrono::milliseconds(
      std::max<int64_t>(1000, std::min(settings.commit_deadline_ms, settings.request_deadline_ms)));
  // Other instances store deliveries this writer never sees: its background work (the
  // processor, if this instance leads) looks for them this often when it has nothing else.
  if (ingest->store->shared()) writer_options.idle_wakeup = std::chrono::milliseconds(100);
  ingest->writer = std::make_unique<store::InboxWriter>(*ingest->inbox, writer_options);
  ingest->writer->on_commit([metrics = &ingest->commit_metrics](size_t batch, double seconds, bool ok) {
    metrics->observe(batch, seconds, ok);
  });
  // synchronous = "full": each batch's acks wait for a sync on a thread of its own
  // (store/durability.h: CommitSync) rather than inside the commit, so the writer applies
  // the batch and commits the next one meanwhile. The write connection itself then
  // commits without a sync, before the processor reads its level (its steps relax only a
  // synced level). Without the sync thread (it cannot be started), each commit syncs.
  if (settings.synchronous == "full") {
    auto wal_sync = ingest->store->sync_commits_on_thread();
    if (wal_sync && *wal_sync) {
      ingest->writer->sync_commits_with(std::move(*wal_sync));
    } else if (wal_sync) {
      log::info("wal_sync_not_used").str("reason", "each commit is durable when it returns");
    } else {
      log::warn("wal_sync_not_started").str("error", wal_sync.error());
    }
  }
  return ingest;
}

}  // namespace hh::app
