#pragma once
// The inbox: the store's narrow interface for accepting deliveries. The receiver and the
// replay command only ever call this; a PostgreSQL backend (spec §9) implements the same
// interface with a sequence for `seq` and ON CONFLICT for the message-id check.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace hh::store {

enum class Origin { webhook, fetch };

// One delivery to store. Owned by the caller until append() returns.
struct NewDelivery {
  std::string message_id;
  Origin origin = Origin::webhook;
  int64_t received_at_ms = 0;
  std::optional<int64_t> webhook_timestamp;  // signed timestamp (s); none for fetched rows
  std::optional<std::string> event_type;     // $.event_type if it could be read at ingest
  std::string headers_json;                  // {"name":"value",...} as received
  std::string body;                          // raw bytes
};

// too_large: the delivery cannot be a row of this store (max_delivery_bytes()); nothing of
// it is written, and the rest of its batch is stored as usual.
enum class AppendStatus { stored, duplicate, too_large };

struct Appended {
  AppendStatus status;
  int64_t seq;  // the new row's seq, or the existing row's for a duplicate (0: too_large)
};

class Inbox {
 public:
  virtual ~Inbox() = default;

  // Stores `batch` in order, in ONE durable transaction (group commit): either every
  // delivery is stored (or recognised as a duplicate) and durable when this returns, or
  // nothing is written and the error says why. Results are in batch order. A message id
  // repeated inside the batch is stored once; the later ones report duplicate.
  virtual Result<std::vector<Appended>> append(std::span<const NewDelivery* const> batch) = 0;

  // Work that must commit together with the rows (the fetcher records a job's progress
  // with the page it stored). Runs after the inserts, inside the transaction; an error
  // rolls everything back and is returned.
  using AlsoInTransaction = std::function<Result<void>(std::span<const Appended> appended)>;
  // append() plus `also`, in one transaction.
  virtual Result<std::vector<Appended>> append_with(std::span<const NewDelivery* const> batch,
                                                    const AlsoInTransaction& also) = 0;

  // The largest delivery (body and headers together) a row can hold.
  virtual uint64_t max_delivery_bytes() const = 0;

  // The highest seq stored so far (0 for an empty inbox).
  virtual int64_t last_seq() const = 0;

  // A write transaction that stores nothing: whether the store takes writes again after a
  // commit failed busy (a lock held past the deadline) or unavailable (PostgreSQL's
  // connection lost). The writer probes with it, so that readiness comes back when the
  // cause goes, not only when the next delivery happens to arrive (a load balancer sends
  // none while /readyz is 503). Not for a full disk or size cap: a probe that writes
  // nothing would pass where a delivery's commit still fails.
  virtual Result<void> probe_write() = 0;
};

}  // namespace hh::store
