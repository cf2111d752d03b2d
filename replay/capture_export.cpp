#include "replay/capture_export.h"

#include "replay/capture_file.h"

namespace hh::replay {
namespace {

// A damaged page ends SQLite's walk of a table early, without an error: the export would
// end there and say it was done. The newest row the filter takes, found from the other end
// (a descent from the root), must be the last one the walk read. In the same snapshot.
Result<void> check_read_through(store::DeliveryQuery& query, const store::DeliveryFilter& filter, int64_t last_seq,
                                int64_t read_seq) {
  if (last_seq == 0 || read_seq == last_seq) return {};
  if (auto started = query.start_newest_first(filter, last_seq + 1); !started) return fail(started);
  store::StoredDelivery newest;
  auto has_row = query.next(newest);
  query.finish();
  if (!has_row) return fail(has_row);
  if (!*has_row || newest.seq <= read_seq) return {};
  return fail(ErrorKind::io, "the deliveries cannot be read past seq " + std::to_string(read_seq) + ", though seq " +
                                 std::to_string(newest.seq) +
                                 " is there: the database file is damaged (`PRAGMA integrity_check` says where; "
                                 "restore it from a backup)");
}

}  // namespace

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
  int64_t read_seq = 0;  // the last row's
  for (;;) {
    auto has_row = query.next(row);
    if (!has_row) return fail(has_row);
    if (!*has_row) break;
    read_seq = row.seq;
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
  if (auto checked = check_read_through(query, filter, last_seq, read_seq); !checked) return fail(checked);
  // Without filters on the event type or status, the walk read every row of the window: as
  // many as are found through the received_at index (a damaged page can also make the walk
  // skip rows in its middle).
  if (!filter.event_type_glob && !filter.status) {
    auto counted = query.count_window(filter);
    if (!counted) return fail(counted);
    const int64_t read = summary.exported + summary.skipped;
    if (*counted != read) {
      return fail(ErrorKind::io, "read " + std::to_string(read) + " deliveries where the index of the inbox counts " +
                                     std::to_string(*counted) +
                                     ": the database file is damaged (`PRAGMA integrity_check` says where; restore it "
                                     "from a backup)");
    }
  }
  if (auto flushed = out.flush(); !flushed) return fail(flushed);
  return summary;
}

}  // namespace hh::replay
