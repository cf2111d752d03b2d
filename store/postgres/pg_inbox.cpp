#include "store/postgres/pg_inbox.h"

#include <limits>
#include <optional>
#include <string>

#include "store/postgres/outbox/pg_outbox_writer.h"
#include "store/postgres/processing_shards.h"

namespace hh::store {
namespace {

// PostgreSQL's limit for one field (1 GiB), minus room for the rest of the row.
constexpr uint64_t kMaxFieldBytes = (uint64_t{1} << 30) - 4096;

// One delivery: the new row's seq and true, or the stored row's seq and false. A row that
// another instance committed while this insert waited is not in this statement's snapshot:
// then no row comes back, and the seq is looked up afterwards (duplicate_seq()). $8: the
// row's processing shard (processing_shards.h).
constexpr const char* kAppend =
    "WITH stored AS (INSERT INTO inbox (message_id, origin, received_at, webhook_timestamp, event_type, headers, "
    "body, shard) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (message_id) DO NOTHING RETURNING seq) "
    "SELECT seq, true FROM stored "
    "UNION ALL SELECT seq, false FROM inbox WHERE message_id = $1 AND NOT EXISTS (SELECT 1 FROM stored)";
constexpr const char* kFind = "SELECT seq FROM inbox WHERE message_id = $1";

std::string_view origin_text(Origin origin) { return origin == Origin::webhook ? "webhook" : "fetch"; }

// How many times a batch the server ended as a deadlock (or a serialization failure) is
// stored again: each round waits for the other transaction, which then commits.
constexpr int kDeadlockRetries = 3;

class PgInbox final : public Inbox {
 public:
  PgInbox(pg::Connection& db, PgOutboxWriter outbox) : db_(&db), outbox_(std::move(outbox)) {}

  Result<std::vector<Appended>> append(std::span<const NewDelivery* const> batch) override {
    auto appended = append_with(batch, {});
    // The connection broke (a server restart, a failover): once more on a new one. Safe
    // even if the lost COMMIT did commit: the message-id check then reports the rows as
    // duplicates, which are acknowledged the same.
    if (!appended && !db_->is_open()) appended = append_with(batch, {});
    // Two instances' batches holding the same ids in opposite orders (a balancer that sends
    // a retry to the other instance while the first still stores it) wait for each other
    // on the unique index: the server ends one transaction as a deadlock. Its rows were
    // rolled back, and the other's commit makes them duplicates: the batch is stored again
    // rather than answered 503 whole.
    for (int again = 0; again < kDeadlockRetries && !appended && ends_in_a_deadlock(appended); ++again) {
      appended = append_with(batch, {});
    }
    return appended;
  }
  Result<std::vector<Appended>> append_with(std::span<const NewDelivery* const> batch,
                                            const AlsoInTransaction& also) override;
  uint64_t max_delivery_bytes() const override { return postgres_max_delivery_bytes(); }
  // A transaction id drawn and committed: a commit record in the server's WAL, as a
  // delivery's commit makes (on a new connection if the old one broke).
  Result<void> probe_write() override {
    if (auto open = db_->reconnect_if_broken(); !open) return fail(open);
    auto probed = db_->query_int("SELECT txid_current()");
    if (!probed) return fail(probed);
    return {};
  }
  // Every committed row is durable, and other instances add rows with any seq: nothing
  // here bounds what may be applied. The processor reads up to the inbox horizon
  // (inbox_horizon.h) instead.
  int64_t last_seq() const override { return std::numeric_limits<int64_t>::max(); }

 private:
  Result<void> send_inserts(pg::Pipeline& pipeline, std::span<const NewDelivery* const> batch,
                            std::vector<bool>& sent);
  Result<std::vector<Appended>> read_results(std::span<const pg::Rows> rows, std::span<const NewDelivery* const> batch,
                                             const std::vector<bool>& sent, size_t first);
  Error rollback(Error error);
  // The server ended the transaction for the client to run it again: 40P01 deadlock
  // detected, 40001 serialization failure.
  bool ends_in_a_deadlock(const Result<std::vector<Appended>>& appended) const {
    return appended.error_kind() == ErrorKind::busy &&
           (db_->last_sqlstate() == "40P01" || db_->last_sqlstate() == "40001");
  }

  pg::Connection* db_;
  PgOutboxWriter outbox_;  // deliveries-mode entries, in each commit's transaction
  bool prepared_ = false;
};

Result<void> PgInbox::send_inserts(pg::Pipeline& pipeline, std::span<const NewDelivery* const> batch,
                                   std::vector<bool>& sent) {
  for (size_t i = 0; i < batch.size(); ++i) {
    const NewDelivery& d = *batch[i];
    sent[i] = d.body.size() + d.headers_json.size() + d.message_id.size() <= kMaxFieldBytes;
    if (!sent[i]) continue;
    pg::Params params;
    params.add(d.message_id).add(origin_text(d.origin)).add(d.received_at_ms).add(d.webhook_timestamp);
    params.add(d.event_type).add(d.headers_json).bytes(d.body);
    // Read here, not by the server: the server's time is what processing waits for, and
    // reading the user costs about 0.1 µs on a 1 KiB body (decision 050).
    params.add(int64_t{pgshard::shard_of_row(origin_text(d.origin), d.headers_json, d.body)});
    if (auto queued = pipeline.send_prepared("hh_inbox_append", params); !queued) return queued;
  }
  return {};
}

Result<std::vector<Appended>> PgInbox::read_results(std::span<const pg::Rows> rows,
                                                    std::span<const NewDelivery* const> batch,
                                                    const std::vector<bool>& sent, size_t first) {
  std::vector<Appended> results;
  results.reserve(batch.size());
  size_t at = first;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!sent[i]) {
      results.push_back({AppendStatus::too_large, 0});
      continue;
    }
    const pg::Rows& row = rows[at++];
    if (!row.empty()) {
      results.push_back({row.boolean(0, 1) ? AppendStatus::stored : AppendStatus::duplicate, row.integer(0, 0)});
    } else {
      results.push_back({AppendStatus::duplicate, -1});  // committed by another instance meanwhile
    }
  }
  return results;
}

// The seqs of duplicates that another instance stored while this batch waited for it.
Result<void> fill_duplicate_seqs(pg::Connection& db, std::span<const NewDelivery* const> batch,
                                 std::vector<Appended>& results) {
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].seq != -1) continue;
    auto found = db.run("hh_inbox_find", pg::Params().add(batch[i]->message_id));
    if (!found) return fail(found);
    results[i].seq = found->empty() ? 0 : found->integer(0, 0);
  }
  return {};
}

Error PgInbox::rollback(Error error) {
  (void)db_->exec("ROLLBACK");  // a failed pipeline leaves its transaction open and aborted
  return error;
}

Result<std::vector<Appended>> PgInbox::append_with(std::span<const NewDelivery* const> batch,
                                                   const AlsoInTransaction& also) {
  std::vector<bool> sent(batch.size());
  std::vector<Appended> results;
  // A server restart broke the connection: the batch goes to a new one (the statements
  // prepared before are prepared again).
  if (auto open = db_->reconnect_if_broken(); !open) return fail(open);
  if (!prepared_) {  // once, and outside a pipeline (libpq prepares synchronously)
    if (auto p = db_->prepare("hh_inbox_append", kAppend); !p) return fail(p);
    if (auto p = db_->prepare("hh_inbox_find", kFind); !p) return fail(p);
    prepared_ = true;
  }
  {
    // BEGIN, the inserts and (when nothing else must run in the transaction) COMMIT: one
    // round trip. Outbox entries and `also` need the new seqs first: a second one.
    // (finish() leaves pipeline mode: a ROLLBACK or lookup after it is a statement again.)
    auto pipeline = pg::Pipeline::begin(*db_);
    if (!pipeline) return fail(pipeline);
    if (auto b = pipeline->send("BEGIN"); !b) return fail(b);
    // The transaction draws seqs that no instance's processing may read past until it ends
    // (the inbox horizon, inbox_horizon.h). Its statements go out together and its work in
    // between is in this process (outbox entries, a fetched page's job update), so it never
    // waits on this client for long; one that does belongs to a writer stopped without its
    // connection closing (SIGSTOP, a paused VM, a host gone without a FIN), and would hold
    // every instance's processing back. The server ends it after 15 s idle; the frozen
    // writer's batch then fails (no 2xx was sent for it). Only this transaction: commands
    // that process on this connection (`rebuild`, `replay`) may wait longer between
    // statements, for a large body to be read and parsed.
    if (auto t = pipeline->send("SET LOCAL idle_in_transaction_session_timeout = '15s'"); !t) {
      (void)pipeline->finish();
      return rollback(fail(t));
    }
    if (auto queued = send_inserts(*pipeline, batch, sent); !queued) {
      (void)pipeline->finish();
      return rollback(fail(queued));
    }
    const bool commit_now = !also && !outbox_.active();
    if (commit_now) {
      if (auto c = pipeline->send("COMMIT"); !c) {
        (void)pipeline->finish();
        return rollback(fail(c));
      }
    }
    auto rows = pipeline->finish();
    if (!rows) return rollback(fail(rows, "storing deliveries"));
    if (commit_now && std::string_view(PQcmdStatus(rows->back().get())) != "COMMIT") {
      return fail(ErrorKind::other, "storing deliveries: the transaction was rolled back");
    }
    auto read = read_results(*rows, batch, sent, 2);  // after BEGIN and SET LOCAL
    if (!read) return rollback(fail(read));
    results = std::move(*read);
    if (commit_now) {
      if (auto filled = fill_duplicate_seqs(*db_, batch, results); !filled) return fail(filled);
      return results;
    }
  }
  if (outbox_.active()) {
    std::vector<int64_t> stored;
    for (const Appended& a : results) {
      if (a.status == AppendStatus::stored) stored.push_back(a.seq);
    }
    if (!stored.empty()) {
      if (auto added = outbox_.deliveries(stored); !added) return rollback(fail(added));
    }
  }
  if (also) {
    if (auto done = also(results); !done) return rollback(fail(done));
  }
  auto committed = db_->query("COMMIT");
  if (!committed) return rollback(fail(committed));
  if (std::string_view(PQcmdStatus(committed->get())) != "COMMIT") {
    return fail(ErrorKind::other, "storing deliveries: the transaction was rolled back");
  }
  if (auto filled = fill_duplicate_seqs(*db_, batch, results); !filled) return fail(filled);
  return results;
}

}  // namespace

Result<std::unique_ptr<Inbox>> open_postgres_inbox(pg::Connection& db, std::span<const ForwardRule> forward_rules) {
  auto outbox = PgOutboxWriter::create(db, {forward_rules.begin(), forward_rules.end()});
  if (!outbox) return fail(outbox);
  return std::unique_ptr<Inbox>(new PgInbox(db, std::move(*outbox)));
}

uint64_t postgres_max_delivery_bytes() { return kMaxFieldBytes; }

}  // namespace hh::store
