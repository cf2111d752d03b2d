#pragma once
// What both job queues (store/sqlite/jobs/job_store.cpp, store/postgres/jobs/
// pg_job_queue.cpp) write when a running job is found abandoned: a crash of this process
// (SQLite, at start-up) or an expired lease (PostgreSQL: its instance stopped). The same
// words, so `healthhook jobs` reads the same whichever store it looks at.
#include <string_view>

namespace hh::store {

inline constexpr std::string_view kInterruptedJobError = "interrupted: healthhook stopped while the job was running";

}  // namespace hh::store
