#pragma once
// The follow-up job queue (store/jobs/job_queue.h) on PostgreSQL, shared by every
// healthhook instance of one store (spec §9): each job runs once, a dead instance's jobs
// are taken over.
//
// A claim is a lease: claim_due marks a job running until lease_until = now + lease_ms,
// with SELECT … FOR UPDATE SKIP LOCKED so instances claiming together never take the same
// row; each stored page (record_progress_in_transaction) renews it, and so does the
// fetcher while a fetch is in flight (renew_lease, every third of the lease), so a slow
// page never outlives it. A running job whose
// lease has passed was abandoned (its instance stopped, or lost the store): any instance's
// next claim_due takes it over, counting a failed attempt (`dead` when that uses up the
// attempts), as requeue_interrupted does after a crash on SQLite. requeue_interrupted at
// start-up does the same to expired leases only: other instances' live jobs stay theirs.
//
// Every update of a claimed job is conditional on state = running, the trigger_seq it was
// claimed with and, here, the lease this object last set: an instance whose lease passed
// and whose job was taken over finds its update refused (`false`, superseded) instead of
// storing a page the new owner stores too.
//
// Clocks: leases compare the callers' now_ms, so the instances' clocks must agree to well
// within the lease (NTP does; minutes apart would take live jobs over early).
#include <cstdint>
#include <memory>

#include "common/result.h"
#include "store/jobs/job_queue.h"
#include "store/postgres/connection.h"

namespace hh::store {

// Five minutes (`[service] job_lease_s`). A live instance renews the lease every third of
// it, during a fetch too (fetcher/job_runner.h), so what must fit in one lease is a
// renewal's wait for the writer thread, not a fetch; a dead instance's jobs (follow-up
// fetches, not on anyone's request path) wait at most this long to be taken over.
inline constexpr int64_t kDefaultJobLeaseMs = 5 * 60 * 1000;

// `db` is the writer connection: it must stay live, migrated, and used by one thread at a
// time (the writer thread's). claim_due takes over expired leases with the max_attempts of
// the last requeue_interrupted call (RetryPolicy's default before one).
Result<std::unique_ptr<JobQueue>> open_postgres_job_queue(pg::Connection& db, int64_t lease_ms = kDefaultJobLeaseMs);

}  // namespace hh::store
