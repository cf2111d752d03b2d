#pragma once
// Reads and parses inbox rows on a thread of its own, running ahead of the applying
// thread (catch-up: replay, rebuild), so parsing overlaps with the store's work: reading and
// parsing are a large part of a rebuild.
//
// The thread reads through a reader of its own (store::ProcessingStore::open_reader: it
// reads committed rows while the writer writes). Inbox rows never change once stored,
// except status/family/error, which only the applying thread writes, so it reads exactly
// what an inline step would read. It reads in chunks, each its own short read, so it
// never holds back the writer's checkpoints for long.
//
// Bounded: at most kSlots parsed rows wait, and their bodies stay under kMaxBytesAhead
// (one row at least), so a run of 50 MB fetched pages cannot pin many parser buffers.
// A slot that held a body over kTrimAbove gives its memory back when it is released.
//
// Live processing (`serve`) starts one that follows the inbox (Mode::follow) while it
// applies a backlog no delivery is adding to, and stops it once caught up or when
// deliveries arrive again (ProcessorOptions in processor.h: why not always). Following,
// the thread waits at its end for more instead of finishing. It has two bounds: it reads
// and parses every committed row (read_ahead()), while a step ends at the newest row on
// disk (extend(), the writer's durable seq). So a row is parsed while its sync runs,
// and the step that applies it after the sync finds it ready.
//
// Lifetime: the destructor stops and joins the thread. Rows handed out by next() stay
// valid until the next call of next() or end_step().
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "processor/parsed_delivery.h"
#include "store/processing_store.h"

namespace hh::processor {

class ParsePipeline final : public ParsedSource {
 public:
  static constexpr size_t kSlots = 128;
  static constexpr size_t kMaxBytesAhead = size_t{32} << 20;
  static constexpr int64_t kChunkRows = 64;
  // Above this body size, a slot frees its buffers once applied (webhooks stay below it;
  // fetched pages may not): what a pipeline keeps is then about kSlots x kTrimAbove at most.
  static constexpr size_t kTrimAbove = size_t{1} << 20;

  enum class Mode { catch_up, follow };
  // Starts reading the rows with after_seq < seq <= last_seq through `reader` (opened for
  // the matching store::ReaderUse). With Mode::follow, the read bound moves with
  // read_ahead() and extend(), and next() returns nullptr (the step's end) at the last
  // seq given to extend().
  static Result<std::unique_ptr<ParsePipeline>> start(std::unique_ptr<store::DeliveryCursor> reader,
                                                      int64_t after_seq, int64_t last_seq,
                                                      Mode mode = Mode::catch_up);
  ~ParsePipeline() override;
  ParsePipeline(const ParsePipeline&) = delete;
  ParsePipeline& operator=(const ParsePipeline&) = delete;

  // `after_seq` must be the seq of the row handed out last (or the start): the pipeline
  // cannot rewind; after a failed step, start a new one.
  Result<ParsedDelivery*> next(int64_t after_seq) override;
  void end_step() override;
  // next() returns nullptr only once every row up to the step's end is handed out.
  int64_t read_through() const override { return step_end_seq_; }
  // Mode::follow, on the applying thread: rows up to `last_seq` may be applied; steps
  // end there (it also reads up to it).
  void extend(int64_t last_seq);
  // Mode::follow, on the applying thread: rows up to `committed_seq` are committed, so
  // the thread may read and parse them; no step goes past extend()'s bound.
  void read_ahead(int64_t committed_seq);
  // Slots that freed a large body's buffers (applying thread; for tests and logs).
  uint64_t slot_trims() const { return slot_trims_; }
  // Rows read and parsed so far, handed out or waiting (any thread; for tests).
  uint64_t rows_parsed() const { return rows_parsed_.load(std::memory_order_relaxed); }

 private:
  struct Slot;
  ParsePipeline(std::unique_ptr<store::DeliveryCursor> reader, int64_t after_seq, int64_t last_seq, Mode mode);
  void read_all();
  Result<bool> read_chunk();
  Slot* acquire(size_t body_bytes);  // nullptr when stopping
  void trim_current();               // applying thread, before release_current()
  // With mutex_ held; true when the reader waits for the room it freed (then notify it).
  bool release_current();

  std::unique_ptr<store::DeliveryCursor> reader_;  // the thread's only
  store::PendingDelivery pending_;   // reader thread only
  int64_t next_after_seq_;           // reader thread only
  int64_t chunk_last_seq_ = 0;       // reader thread only: the bound of the last chunk read
  const Mode mode_;
  int64_t last_seq_;                 // GUARDED_BY(mutex_): the read bound; moves only in Mode::follow
  int64_t step_end_seq_;             // applying thread only: no row after it is handed out
  std::vector<std::unique_ptr<Slot>> slots_;

  // One condition per waiting thread, each notified only by what it waits for. A single
  // shared one was notified at every row handed out, which woke the reader (waiting for
  // the writer's next commit) once per row to find nothing to do, and the woken reader
  // then held the lock the writer wanted next; on a machine of two cores every such
  // wake-up waits for a CPU (docs/decisions/011-parse-pipeline-conditions.md).
  std::mutex mutex_;
  std::condition_variable to_reader_;   // acquire() and the follow wait in read_all()
  std::condition_variable to_applier_;  // next()
  std::vector<Slot*> free_;          // GUARDED_BY(mutex_)
  std::deque<Slot*> ready_;          // GUARDED_BY(mutex_)
  size_t bytes_ahead_ = 0;           // GUARDED_BY(mutex_)
  bool finished_ = false;            // GUARDED_BY(mutex_)
  int64_t caught_up_to_ = 0;         // GUARDED_BY(mutex_), Mode::follow: every row up to it is in ready_ or handed out
  bool stopping_ = false;            // GUARDED_BY(mutex_)
  bool reader_wants_room_ = false;   // GUARDED_BY(mutex_): the reader waits in acquire()
  std::string error_;                // GUARDED_BY(mutex_)

  Slot* current_ = nullptr;          // applying thread only
  int64_t handed_out_seq_;           // applying thread only
  uint64_t slot_trims_ = 0;          // applying thread only
  std::atomic<uint64_t> rows_parsed_{0};
  std::thread thread_;
};

}  // namespace hh::processor
