#pragma once
// What one [[forward]] destination's sender decides (spec §10), apart from moving bytes:
// which POSTs go out now (batch_planner.h), what each answer means for its entries
// (answer_policy.h) and what the outbox keeps of it (store/outbox.h). The transport and
// the clock are the caller's: DestinationSender drives it with HTTP and the wall clock,
// tests/forward/sender_simulation_test.cpp with a model backend and simulated time.
//
// A look at the outbox (next_posts()):
//   1. deletes what was delivered since the last look, in one transaction;
//   2. on SQLite (store/outbox.h): once the outbox holds kMadeAhead of this destination's
//      entries, takes their making over from the writer; then makes the next ones from
//      the change feed or the inbox, a step per look, while it holds fewer, or when the
//      last look found less to send than it had room for or a POST failed (what it holds
//      may then wait behind failing keys, or be dead: a due entry is never held back by
//      them for long), at most a step per kRecountHeldMs then; never past most_held()
//      pending (a look also goes unfilled when its keys wait behind POSTs in flight, with
//      the backend answering: the budget must not drop what it makes); and hands the
//      making back once it has caught up with half as many held. So a backend that is down or slower
//      than ingest costs the writer a bounded number of entries, not one per change;
//   3. marks the entries added since (classify(): which are their key's head);
//   4. plans POSTs from the due heads (batch_planner.h) and pins each new one to its id
//      (post_id = its first entry's outbox_id, webhook-id hhf_<post_id>) in one
//      transaction, before any of them goes out: a POST that went out is retried with the
//      same entries, or not at all. In changes mode a POST of at most kMaxPinnedRows rows
//      has its rows read now, and keeps them (in the outbox, when its first attempt fails):
//      every retry sends the same bytes. A change that carries kept content (it left a
//      split POST) is not read again: it carries those bytes into any POST it joins.
// An answer (finished()):
//   delivered      the entries are deleted at the next look (a crash before it sends them
//                  once more, under the same id);
//   retry          each entry's attempts + 1, due after the backoff or Retry-After;
//   final          dead, every entry of the POST (it goes out whole or not at all);
//   a POST of several users or resources that went out and failed in any way (an answer,
//   a timeout, a lost connection) is split instead (split_off_first_key(), decisions 078
//   and 083): its first key's entries go on under a new id, the others' are planned afresh,
//   neither charged the attempt (it may have failed for a user of the other: each goes out
//   without the other and is judged by its own answers), each change with what it carried
//   (kept first, then the split in one transaction with when each part is due): the first key's part after the backoff or Retry-After, the others after the
//   plain backoff whatever the answer (a Retry-After may be about one user);
//   a retry becomes final when an entry of the POST has had max_attempts attempts, or the
//   oldest is older than max_age when the POST ends (so a POST in flight past max_age
//   dies if it fails, and is delivered if it succeeds).
// A backend that cannot be reached at all (name, TCP connect, TLS handshake) pauses the
// whole destination with a backoff of its own: one POST finds out when it is back,
// instead of every key's first message using up an attempt.
//
// Lifetime and threads: one thread; `outbox` and `metrics` must outlive this object.
// Dropping the object forgets what is in flight: those entries stay pending as they were
// and go out again with their pinned POSTs.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "config/settings.h"
#include "forward/answer_policy.h"
#include "forward/batch_planner.h"
#include "forward/forward_metrics.h"
#include "store/outbox.h"

namespace hh::forward {

// One POST to make.
struct OutgoingPost {
  std::string webhook_id;                   // hhf_<post id> (changes), the message id (deliveries)
  std::vector<store::OutboxEntry> entries;  // in outbox order
  std::vector<int64_t> ids;
  // The entries' contents were read for this attempt and are not in the outbox yet: they
  // are written there if it fails, for the retries to send the same bytes.
  bool content_unsaved = false;
};

// What came of one attempt of a POST.
struct PostOutcome {
  std::optional<unsigned> status;        // the answer's; none: no answer
  std::optional<int64_t> retry_after_s;  // the answer's Retry-After
  std::string failure;                   // no answer: the transport failure's name (forward_metrics.h)
  std::string error;                     // why it failed, in words
  bool unreachable = false;    // no connection at all (name, TCP, TLS): the backend, not this POST
  bool undeliverable = false;  // no body can be made (a delivery's body was removed): final
  bool store_failed = false;   // the body could not be read now: try again later
};

// What a look at the outbox found.
struct Look {
  std::vector<OutgoingPost> posts;
  bool store_failed = false;  // reading or writing the outbox failed (logged once until it works)
  bool more = false;          // new entries are left to mark: look again at once
};

class PostScheduler {
 public:
  static constexpr int64_t kClassifyPerLook = 4096;
  static constexpr int64_t kMadeAhead = 16384;          // pending entries held past which none are made
  static constexpr int64_t kCatchUpPerLook = 2048;      // deliveries whose entries one look makes at most
  static constexpr int64_t kRecountHeldMs = 100;        // how often held entries are counted again
  static constexpr size_t kMaxUnflushedSent = 4096;

  // How many pending entries the sender lets wait before it takes their making over:
  // kMadeAhead, or a quarter of what `max_outbox_mib` holds when that is fewer (1 MiB:
  // 1,024), so that a small budget is carried by the inbox during an outage instead of
  // dropping entries that wait.
  static int64_t made_ahead_for(const config::ForwardSettings& settings);

  // `made_ahead`: made_ahead_for(settings) (tests of the scheduler alone use fewer).
  PostScheduler(config::ForwardSettings settings, store::Outbox& outbox, DestinationMetrics& metrics,
                uint64_t seed, std::optional<int64_t> made_ahead = std::nullopt);

  // changes mode: what each entry of a new POST carries (its object in "changes"), pinned
  // with the POST so that every attempt sends the same bytes (change_payload.h). Without
  // it (tests of the scheduler alone) POSTs are pinned without their content.
  // POSTs of more rows than this (a timeseries batch of thousands of samples) are pinned
  // without their content and read again at each attempt: reading megabytes of rows for
  // every POST of a look, and writing them in the pin's transaction, held the writer (and
  // so the acks) and the other users' POSTs back (decision 070).
  static constexpr int64_t kMaxPinnedRows = 200;
  static int64_t rows_carried(std::span<const store::OutboxEntry* const> entries);
  using ContentRenderer =
      std::function<Result<std::vector<std::string>>(std::span<const store::OutboxEntry* const> entries)>;
  void render_contents_with(ContentRenderer renderer) { render_contents_ = std::move(renderer); }

  // A look at the outbox at `now_ms` (Unix ms): up to `posts` POSTs to start now. None
  // while the destination is paused (paused_until_ms()).
  Look next_posts(int64_t now_ms, size_t posts);
  // What came of a POST next_posts() returned; each is reported once (or never, when the
  // sender stops while it is in flight).
  void finished(const OutgoingPost& post, const PostOutcome& outcome, int64_t now_ms);
  // Deletes the delivered entries not deleted yet (at the next look otherwise, or when
  // kMaxUnflushedSent wait).
  void flush();

  // The backend could not be reached: nothing is sent before this (Unix ms).
  int64_t paused_until_ms() const { return unreachable_until_ms_; }
  // Entries of POSTs in flight (the disk budget leaves them alone).
  std::vector<int64_t> in_flight_ids() const;
  size_t in_flight() const { return in_flight_posts_.size(); }
  bool flush_due() const { return sent_unflushed_.size() >= kMaxUnflushedSent; }

 private:
  Busy busy() const;
  void record_failure(const OutgoingPost& post, const PostOutcome& outcome, Verdict verdict, int64_t now_ms);
  // A failed POST of several users or resources: its first key's entries pinned to a new
  // id, the others unpinned, each part due again, uncharged (Outbox::split), and the
  // entries that may no longer go on killed. False when it holds one key or the split
  // failed (nothing was written then).
  bool split_off_first_key(const OutgoingPost& post, const PostOutcome& outcome, int64_t now_ms);
  // What a failed attempt means for a part of a POST (all of it, or a split's first key):
  // it dies (its verdict is final, or an entry reached max_attempts, counting the attempt
  // when `charged`, or the oldest is past max_age), with `error` as the entries' last.
  struct PartFate {
    bool dies = false;
    std::string error;
  };
  PartFate judge(std::span<const store::OutboxEntry* const> part, bool charged, Verdict verdict,
                 const PostOutcome& outcome, int64_t now_ms) const;
  Result<void> kill(const OutgoingPost& post, std::span<const store::OutboxEntry* const> part,
                    std::optional<int64_t> status, const std::string& why);
  void note_failing(const OutgoingPost& post, const std::string& error, std::chrono::milliseconds delay);
  void not_updated(const OutgoingPost& post, const std::string& error);
  // What a failed attempt carried, pinned with its POST when not kept yet (false: it could
  // not be written; the next attempt reads the rows again).
  bool keep_content(const OutgoingPost& post);
  // changes mode: reads the rows of the POST's changes that carry nothing kept, when they
  // are at most kMaxPinnedRows rows, into their `content` (not written to the outbox yet).
  Result<void> read_unkept_contents(OutgoingPost& post);
  // The user a split isolated until its first part was answered (alone_users_) is free
  // again when `webhook_id` is that part's.
  void release_alone_user(const std::string& webhook_id);
  // Frees the users whose first part left the outbox without an answer the scheduler saw:
  // erased with its user, dropped by the budget, requeued, taken by another instance.
  void release_vanished_alone_users();
  // Step 2 of a look.
  Result<void> catch_up(int64_t now_ms);
  // The pending entries the sender never makes more past (deliveries it makes at most,
  // whatever its looks find): twice made_ahead_, half of a small budget (1 MiB: 2,048 of
  // its 4,096), the rest left to dead entries and the record of drops (decision 084).
  int64_t most_held() const { return 2 * made_ahead_; }

  const config::ForwardSettings settings_;
  const bool deliveries_;
  const store::ForwardRule rule_;  // what the store makes entries of for this destination
  const int64_t made_ahead_;
  store::Outbox& outbox_;
  DestinationMetrics& metrics_;
  ContentRenderer render_contents_;
  BackoffRule backoff_;
  std::mt19937_64 random_;
  std::unordered_map<std::string, OutgoingPost> in_flight_posts_;  // by webhook-id
  std::vector<store::OutboxEntry> sent_unflushed_;  // delivered, not yet deleted from the store
  // Users whose POST of several users went unanswered and was split with them first, by
  // user_id → the webhook-id of their first part ("hhf_<n>.1"): planned without other
  // users until that part is answered, dies or leaves the outbox (batch_planner.h;
  // forgotten at a restart).
  struct FirstPart {
    std::string webhook_id;
    int64_t post_id = 0;
  };
  std::unordered_map<std::string, FirstPart> alone_users_;
  int64_t unreachable_until_ms_ = 0;
  int64_t unreachable_failures_ = 0;  // in a row, for the pause's backoff
  bool failing_ = false;              // the last POST failed (its first failure and the recovery are logged)
  bool failed_since_step_ = false;    // a POST failed since the sender last made entries (catch_up)
  bool store_failing_ = false;        // the last outbox read or write failed
  int64_t held_ = -1;                 // entries the outbox held at the last count, plus those made since
  int64_t held_counted_ms_ = 0;
  bool starved_ = false;              // the last look planned fewer POSTs than it had room for, or a POST failed
  int64_t forced_at_ms_ = 0;          // the last step made with the outbox full (starved_)
  bool sender_makes_ = false;         // the sender makes the entries (took them over from the writer)
  bool writer_known_ = false;         // sender_makes_ was read from the store (a restart may find it taken over)
};

}  // namespace hh::forward
