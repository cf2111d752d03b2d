#pragma once
// Work that shares the writer thread (store/inbox_writer.h) between ingest batches: the
// processor, the checkpointer.
#include <cstdint>

namespace hh::store {

class BackgroundWork {
 public:
  virtual ~BackgroundWork() = default;
  // One bounded step (one transaction). `durable_seq` is the newest inbox seq that is on
  // disk (InboxWriter::durable_seq()); rows after it must not be applied yet.
  // Returns true when more work is waiting (the writer calls again soon).
  virtual bool run_once(int64_t durable_seq) = 0;
};

}  // namespace hh::store
