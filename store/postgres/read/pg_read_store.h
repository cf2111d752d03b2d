#pragma once
// The PostgreSQL reader's factories, for the dispatch of store/read_store.cpp,
// store/figures.cpp and store/follow_up_reads.cpp: each opens a connection of its own
// (read_session.h: connect_reader) to a store that must already have its schema.
#include <memory>

#include "common/result.h"
#include "store/database_location.h"
#include "store/figures.h"
#include "store/follow_up_reads.h"
#include "store/read_store.h"

namespace hh::store {

Result<std::unique_ptr<ReadStore>> open_postgres_read_store(const Database& database);
Result<std::unique_ptr<StoreFigures>> open_postgres_figures(const Database& database);
Result<std::unique_ptr<FollowUpReads>> open_postgres_follow_up_reads(const Database& database);

}  // namespace hh::store
