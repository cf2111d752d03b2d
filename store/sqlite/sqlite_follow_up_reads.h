#pragma once
// store::FollowUpReads on SQLite (store/follow_up_reads.cpp picks the backend).
#include <memory>
#include <string>

#include "store/follow_up_reads.h"

namespace hh::store {

// The reads of the SQLite file at `path` (it must exist and be migrated).
Result<std::unique_ptr<FollowUpReads>> open_sqlite_follow_up_reads(const std::string& path);

}  // namespace hh::store
