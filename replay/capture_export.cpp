#include "replay/capture_export.h"

#include "replay/capture_file.h"

namespace hh::replay {

Result<CaptureSummary> export_capture(store::ReadStore& reader, const store::DeliveryFilter& filter, OutputFile& out,
                                      Progress* progress, const BadRowReport& report) {
  store::ReadSnapshot snapshot(reader);
  if (!snapshot.begun()) return fail(snapshot.begun());
  store::DeliveryQuery& query = reader.deliveries();

  int64_t first_seq = 0, last_seq = 0;
  if (auto started = query.start_export(filter, first_seq, last_seq); !started) return fail(started);
  if (progress && last_seq > 0) progress->set_total(static_cast<uint64_t>(last_seq - first_seq + 1));

  CaptureSummary summary;
  CaptureParser parser;
  std::vector<CaptureHeader> headers;
  store::StoredDelivery row;
  for (;;) {
    auto has_row = query.next(row);
    if (!has_row) return fail(has_row);
    if (!*has_row) break;
    if (auto parsed = parser.parse_headers(row.headers, headers); !parsed) {
      ++summary.skipped;
      report(row.seq, parsed.error());
      continue;
    }
    const int64_t timestamp = row.webhook_timestamp.value_or(row.received_at_ms / 1000);
    if (row.body_removed_at_ms) {
      append_removed_capture_line(out.buffer(), row.message_id, timestamp, *row.body_removed_at_ms, row.body_sha256);
      ++summary.bodies_removed;
    } else {
      append_capture_line(out.buffer(), row.message_id, timestamp, headers, row.body);
    }
    if (auto flushed = out.flush_if_full(); !flushed) return fail(flushed);
    ++summary.exported;
    if (progress) progress->update(static_cast<uint64_t>(row.seq - first_seq + 1));
  }
  query.finish();
  if (auto flushed = out.flush(); !flushed) return fail(flushed);
  return summary;
}

}  // namespace hh::replay
