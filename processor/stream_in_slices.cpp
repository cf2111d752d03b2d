#include "processor/stream_in_slices.h"

#include <algorithm>

namespace hh::processor {

StreamInSlices::StreamInSlices(const ParsedDelivery& delivery, size_t slice_points, bool changes_outcome)
    : seq_(delivery.seq),
      received_at_ms_(delivery.received_at_ms),
      slice_points_(std::max<size_t>(slice_points, 1)),
      changes_outcome_(changes_outcome),
      status_(rows::status_name(delivery.parse.status)),
      family_(rows::family_name(delivery.parse.family)),
      user_id_(delivery.user_id),
      body_(delivery.rows->fetched_stream->body),
      workout_id_(delivery.rows->fetched_stream->workout_id),
      reader_(body_) {
  const rows::FetchedStream& parsed = *delivery.rows->fetched_stream;
  if (parsed.user_id) stream_user_.emplace(*parsed.user_id);
  if (delivery.rows->delivery_user) delivery_user_.emplace(*delivery.rows->delivery_user);
  stream_ = rows::FetchedStream{workout_id_, body_, parsed.point_count, stream_user_, &slice_};
  // A fetched stream's row carries nothing else (events/delivery_parser.cpp, parse_fetched).
  rows_.family = delivery.rows->family;
  rows_.delivery_user = delivery_user_;
  rows_.fetched_stream = stream_;
}

const rows::DeliveryRows& StreamInSlices::next_slice() {
  slice_ = rows::StreamSlice{&reader_, next_point_, std::min(next_point_ + slice_points_, stream_.point_count)};
  return rows_;
}

}  // namespace hh::processor
