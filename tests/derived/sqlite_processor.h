#pragma once
// A Processor on a SQLite write connection: what `serve`, `rebuild` and `replay` get from
// Store::open_processing(), for tests that hold the connection itself.
#include <memory>

#include "processor/processor.h"
#include "store/sqlite/sqlite_processing_store.h"

namespace hh::test {

inline Result<std::unique_ptr<processor::Processor>> sqlite_processor(sqlite::Connection& db,
                                                                     processor::ProcessorOptions options = {}) {
  auto processing = store::open_sqlite_processing(db);
  if (!processing) return fail(processing);
  return processor::Processor::create(std::move(*processing), options);
}

}  // namespace hh::test
