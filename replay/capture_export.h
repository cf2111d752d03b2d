#pragma once
// `healthhook capture`: writes the inbox's webhook deliveries of a time window, in seq
// order, as a capture file (capture_file.h). Reads one row at a time inside one read
// snapshot (a consistent state while `serve` keeps writing); memory stays flat.
//
// Each line: id = message_id, timestamp = webhook_timestamp (the signed one; received_at
// in seconds if a row has none), headers and body as stored.
#include <cstdint>
#include <functional>
#include <string_view>

#include "common/progress.h"
#include "common/result.h"
#include "replay/output_file.h"
#include "store/read_store.h"

namespace hh::replay {

struct CaptureSummary {
  uint64_t exported = 0;
  uint64_t skipped = 0;  // rows whose stored headers could not be read
  uint64_t bodies_removed = 0;  // of those exported, lines marked "body_removed" (retention)
};

// A row that cannot be written: its seq and why (the export goes on without it).
using BadRowReport = std::function<void(int64_t seq, std::string_view reason)>;

// Reads through `reader` (one of its own); `progress` may be null.
Result<CaptureSummary> export_capture(store::ReadStore& reader, const store::DeliveryFilter& filter, OutputFile& out,
                                      Progress* progress, const BadRowReport& report);

}  // namespace hh::replay
