#pragma once
// A fetched workout stream longer than the store's slice (store::ProcessingStore::
// stream_slice_points()), applied one slice per processor step. In `serve` the steps run
// on the writer thread, which commits the inbox only between them: a 3.3 million point
// stream applied in one step held every ack for ten seconds
// (docs/decisions/094-long-streams-applied-in-slices.md).
//
// The delivery counts as applied (its outcome recorded, applied_seq moved past it) only in
// the step of its last slice. A crash or failed step before that leaves applied_seq before
// it: the delivery is read, parsed and applied again from its first slice, and the slices
// replace the points at their own indexes, so nothing is left twice; latest wins is
// decided by the first slice, and no other delivery is applied between the slices.
//
// It keeps its own copy of the body (the step's views of the inbox row end with the step)
// and the reader's position in it.
//
// Lifetime: not movable (the slice points at the reader, the rows at the copies).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "processor/parsed_delivery.h"
#include "rows/delivery_rows.h"
#include "rows/stream_points.h"

namespace hh::processor {

class StreamInSlices {
 public:
  // `delivery` was parsed as processed, with a fetched stream; `changes_outcome`: its
  // outcome differs from the stored one (so the last slice's step writes it).
  StreamInSlices(const ParsedDelivery& delivery, size_t slice_points, bool changes_outcome);
  StreamInSlices(const StreamInSlices&) = delete;
  StreamInSlices& operator=(const StreamInSlices&) = delete;

  int64_t seq() const { return seq_; }
  int64_t received_at_ms() const { return received_at_ms_; }
  size_t point_count() const { return stream_.point_count; }
  // The rows of the next slice, for ProcessingStore::apply(); then done_slice() once its
  // step committed.
  const rows::DeliveryRows& next_slice();
  // Whether the slice next_slice() handed out is the stream's last.
  bool at_last_slice() const { return slice_.end >= stream_.point_count; }
  // The slice handed out is committed: the next one starts after it.
  void done_slice() { next_point_ = slice_.end; }
  size_t slices_done() const { return (next_point_ + slice_points_ - 1) / slice_points_; }

  // The outcome recorded with the last slice.
  bool changes_outcome() const { return changes_outcome_; }
  std::string_view status() const { return status_; }
  std::string_view family() const { return family_; }
  const std::string& user_id() const { return user_id_; }

 private:
  const int64_t seq_;
  const int64_t received_at_ms_;
  const size_t slice_points_;
  const bool changes_outcome_;
  std::string_view status_, family_;  // static names (rows::status_name(), family_name())
  std::string user_id_;               // recorded with the outcome
  // Copies of what the parsed rows viewed in the inbox row.
  std::string body_, workout_id_;
  std::optional<std::string> stream_user_, delivery_user_;
  rows::StreamPointReader reader_;
  size_t next_point_ = 0;  // the first point of the next slice
  rows::StreamSlice slice_;
  rows::FetchedStream stream_;
  rows::DeliveryRows rows_;
};

}  // namespace hh::processor
