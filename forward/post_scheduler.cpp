#include "forward/post_scheduler.h"

#include <algorithm>

#include "common/log.h"
#include "forward/change_payload.h"
#include "forward/forward_rule.h"
#include "forward/outbox_budget.h"

namespace hh::forward {
namespace {

std::string_view outcome_of_status(unsigned status) {
  if (status >= 200 && status < 300) return "ok";
  if (status == 408) return "http_408";
  if (status == 429) return "http_429";
  if (status >= 400 && status < 500) return "http_4xx";
  if (status >= 500 && status < 600) return "http_5xx";
  return "http_other";
}

// The number of the attempt that just failed, for the most tried of `part`'s entries: what
// dead() leaves each of them at, and what the backoff grows with.
int64_t this_attempt(std::span<const store::OutboxEntry* const> part) {
  int64_t most = 0;
  for (const auto* e : part) most = std::max(most, e->attempts);
  return most + 1;
}

std::optional<int64_t> status_of(const PostOutcome& outcome) {
  return outcome.status ? std::optional<int64_t>(*outcome.status) : std::nullopt;
}

// Why a part's entries die at max_attempts, true for each of them: they count their own
// attempts (an entry that left a split POST, or was requeued, may have had fewer), so a
// part of several names the entry that reached the limit rather than "after N attempts".
// `charge`: 1 when the part counts the failed attempt, 0 after a split.
std::string gave_up_at_max_attempts(std::span<const store::OutboxEntry* const> part, int64_t charge,
                                    int64_t max_attempts) {
  if (part.size() == 1) return "gave up after " + std::to_string(this_attempt(part)) + " attempts (max_attempts)";
  for (const auto* e : part) {
    if (e->attempts + charge < max_attempts) continue;
    return "gave up: the POST's message " + message_id(e->outbox_id) + " reached max_attempts (" +
           std::to_string(max_attempts) + ")";
  }
  return "gave up at max_attempts (" + std::to_string(max_attempts) + ")";
}

}  // namespace

int64_t PostScheduler::made_ahead_for(const config::ForwardSettings& settings) {
  const int64_t budget_entries = settings.max_outbox_mib * (int64_t{1} << 20) / kEntryBytes;
  return std::clamp<int64_t>(budget_entries / 4, 1, kMadeAhead);
}

PostScheduler::PostScheduler(config::ForwardSettings settings, store::Outbox& outbox, DestinationMetrics& metrics,
                             uint64_t seed, std::optional<int64_t> made_ahead)
    : settings_(std::move(settings)),
      deliveries_(settings_.mode == "deliveries"),
      rule_(forward_rule(settings_)),
      made_ahead_(made_ahead.value_or(made_ahead_for(settings_))),
      outbox_(outbox),
      metrics_(metrics),
      backoff_{std::chrono::milliseconds(settings_.backoff_initial_ms), std::chrono::seconds(settings_.backoff_max_s)},
      random_(seed) {}

Busy PostScheduler::busy() const {
  Busy busy;
  auto add = [&](const store::OutboxEntry& e) {
    busy.ids.insert(e.outbox_id);
    if (settings_.ordered && e.order_key) busy.keys.insert(*e.order_key);
    if (e.post_id) busy.posts.insert(*e.post_id);
  };
  for (const auto& [id, post] : in_flight_posts_) {
    for (const auto& e : post.entries) add(e);
  }
  // Delivered but still in the store (their deletion failed): not again.
  for (const auto& e : sent_unflushed_) add(e);
  for (const auto& [user, first_part] : alone_users_) busy.alone_users.insert(user);
  return busy;
}

void PostScheduler::release_alone_user(const std::string& webhook_id) {
  std::erase_if(alone_users_, [&](const auto& alone) { return alone.second.webhook_id == webhook_id; });
}

void PostScheduler::release_vanished_alone_users() {
  std::erase_if(alone_users_, [&](const auto& alone) {
    if (in_flight_posts_.contains(alone.second.webhook_id)) return false;
    auto pending = outbox_.post_entries(alone.second.post_id);
    return pending && pending->empty();  // a store failure keeps it until the next look
  });
}

std::vector<int64_t> PostScheduler::in_flight_ids() const {
  std::vector<int64_t> ids;
  for (const auto& [id, post] : in_flight_posts_) ids.insert(ids.end(), post.ids.begin(), post.ids.end());
  return ids;
}

void PostScheduler::flush() {
  if (sent_unflushed_.empty()) return;
  std::vector<int64_t> ids;
  for (const auto& e : sent_unflushed_) ids.push_back(e.outbox_id);
  if (auto deleted = outbox_.sent(ids); !deleted) {
    // They stay pending in the store: kept here, so they are not sent again, and deleted
    // with the next flush.
    log::error("forward_outbox_not_updated").str("destination", settings_.name).str("error", deleted.error());
    return;
  }
  sent_unflushed_.clear();
}

// The rows a POST of `entries` carries: a samples change its samples, any other one row
// (stream points carry none; their workout is read with the read API).
int64_t PostScheduler::rows_carried(std::span<const store::OutboxEntry* const> entries) {
  int64_t rows = 0;
  for (const auto* e : entries) rows += e->table_name == "samples" ? std::max<int64_t>(e->row_count, 1) : 1;
  return rows;
}

Look PostScheduler::next_posts(int64_t now_ms, size_t posts) {
  Look look;
  flush();
  auto failed = [&](const std::string& error) {
    if (!store_failing_) log::error("forward_outbox_unreadable").str("destination", settings_.name).str("error", error);
    store_failing_ = true;
    look.store_failed = true;
    return std::move(look);
  };
  if (auto made = catch_up(now_ms); !made) return failed(made.error());
  auto marked = outbox_.classify(settings_.name, settings_.ordered, kClassifyPerLook);
  if (!marked) return failed(marked.error());
  look.more = *marked >= kClassifyPerLook;
  if (now_ms < unreachable_until_ms_ || posts == 0) {
    store_failing_ = false;
    return look;
  }
  const size_t batch = deliveries_ ? 1 : static_cast<size_t>(std::max<int64_t>(settings_.batch, 1));
  release_vanished_alone_users();  // rare (a timeout split): a query each
  auto planned = plan_posts(outbox_, settings_.name, busy(), now_ms,
                            PlanLimits{.ordered = settings_.ordered, .batch = batch, .posts = posts});
  if (!planned) return failed(planned.error());
  starved_ = planned->size() < posts;
  std::vector<store::PostPin> pins;
  for (PlannedPost& p : *planned) {
    OutgoingPost post;
    post.entries = std::move(p.entries);
    for (const auto& e : post.entries) post.ids.push_back(e.outbox_id);
    if (deliveries_) {
      // One delivery per POST, under its own message id: it names one content already.
      post.webhook_id = post.entries.front().row_key;
    } else {
      const int64_t post_id = p.pinned.value_or(post.entries.front().outbox_id);
      post.webhook_id = post_message_id(post_id);
      // The rows of its changes that carry nothing kept are read now: a new POST's, one
      // pinned whose only attempt was cut short (a crash or stop before its answer came;
      // after a restart it would otherwise read its rows again at every attempt). A change
      // that left a split POST keeps what it carried there, beside changes read now (its id
      // names one content for ever, whatever POST it goes out in).
      if (auto read = read_unkept_contents(post); !read) {
        // Then none goes out this look (as when the pins cannot be written).
        look.posts.clear();
        return failed(read.error());
      }
      if (!p.pinned) {
        pins.push_back(store::PostPin{post_id, post.ids, {}});
        for (auto& e : post.entries) e.post_id = post_id;
      }
    }
    look.posts.push_back(std::move(post));
  }
  // Pinned before any of them goes out: a crash after a POST left must not let its
  // entries go out in another grouping under the same id.
  if (auto pinned = outbox_.pin(pins); !pinned) {
    // Then none of them goes out (unpinned, they could later go out otherwise grouped under
    // the same id): the next look plans them again.
    look.posts.clear();
    return failed(pinned.error());
  }
  store_failing_ = false;
  for (const OutgoingPost& post : look.posts) in_flight_posts_.emplace(post.webhook_id, post);
  return look;
}

Result<void> PostScheduler::read_unkept_contents(OutgoingPost& post) {
  if (!render_contents_) return {};
  std::vector<store::OutboxEntry*> unkept;
  for (auto& e : post.entries) {
    if (!e.content) unkept.push_back(&e);
  }
  const std::vector<const store::OutboxEntry*> entries(unkept.begin(), unkept.end());
  if (entries.empty() || rows_carried(entries) > kMaxPinnedRows) return {};
  auto contents = render_contents_(entries);
  if (!contents) return fail(contents);
  // Kept in memory with the POST; written to the outbox only if this attempt fails
  // (record_failure()), so that a POST delivered at once costs no write of its rows.
  for (size_t i = 0; i < unkept.size(); ++i) unkept[i]->content = std::move((*contents)[i]);
  post.content_unsaved = true;
  return {};
}

Result<void> PostScheduler::catch_up(int64_t now_ms) {
  if (!outbox_.sender_can_make_entries()) return {};
  // While the writer makes the entries, a look (one per POST) costs nothing more than a
  // count every kRecountHeldMs.
  if (held_ < 0 || now_ms - held_counted_ms_ >= kRecountHeldMs || now_ms < held_counted_ms_) {
    auto held = outbox_.held(settings_.name, made_ahead_);
    if (!held) return fail(held);
    held_ = *held;
    held_counted_ms_ = now_ms;
  }
  if (held_ >= made_ahead_) {
    if (!sender_makes_) {
      if (auto taken = outbox_.take_over(rule_); !taken) return taken;
      sender_makes_ = true;
      log::info("forward_entries_taken_over").str("destination", settings_.name).num("held", held_);
    }
    // Full: more only when what is held could not fill the last look, or failed (what is
    // held may then wait behind failing keys, while other keys' entries wait unmade), and
    // then at most one step per kRecountHeldMs: a backend failing everything costs what
    // it cost before the sender took over, not more.
    const bool due = starved_ && (now_ms - forced_at_ms_ >= kRecountHeldMs || now_ms < forced_at_ms_);
    if (!due) return {};
    forced_at_ms_ = now_ms;
    // Counted to the ceiling, not to made_ahead_: a look that cannot be filled is also one
    // whose keys wait behind their POSTs in flight (ordered, a few users), with the backend
    // answering; each step then made as much again until the budget dropped entries.
    auto held = outbox_.held(settings_.name, most_held());
    if (!held) return fail(held);
    held_ = *held;
    held_counted_ms_ = now_ms;
    // The ceiling holds while every POST is answered: an unfilled look is then keys waiting
    // behind their POSTs in flight. Once a POST has failed since the last step, entries
    // held may wait behind failing keys while other keys' deliveries wait unmade: the step
    // is made (the budget drops the oldest past it), else one failing resource with a
    // ceiling's worth of entries stopped every other key's forwarding for days.
    if (held_ >= most_held() && !failed_since_step_) return {};
  } else if (!sender_makes_ && writer_known_) {
    return {};  // the writer makes them, and too few wait for the sender to take over
  }
  starved_ = false;
  failed_since_step_ = false;
  const int64_t step = std::clamp<int64_t>(most_held() - held_, 1, kCatchUpPerLook);
  auto caught = outbox_.catch_up(rule_, step, held_ < made_ahead_ / 2);
  if (!caught) return fail(caught);
  held_ += caught->entries;
  if (sender_makes_ && caught->by_writer) {
    log::info("forward_entries_handed_back").str("destination", settings_.name).num("held", held_);
  }
  sender_makes_ = !caught->by_writer;
  writer_known_ = true;
  // Not at once, even with more to make: each step holds the write lock that ingest's
  // commits wait for; the next look (a POST ending, or kPollInterval) makes the next.
  return {};
}

void PostScheduler::finished(const OutgoingPost& post, const PostOutcome& outcome, int64_t now_ms) {
  in_flight_posts_.erase(post.webhook_id);
  // The backend answered about the user a split isolated: it no longer hangs on it.
  if (outcome.status) release_alone_user(post.webhook_id);
  Verdict verdict = Verdict::retry;
  if (outcome.status) {
    metrics_.count_request(outcome_of_status(*outcome.status));
    verdict = verdict_of_status(*outcome.status);
    unreachable_failures_ = 0;
  } else if (outcome.undeliverable) {
    verdict = Verdict::final;
  } else if (!outcome.store_failed) {
    metrics_.count_request(outcome.failure);
  }
  // Every lane would fail the same way: the whole destination waits, with its own backoff.
  // Once per pause: the POSTs in flight when the backend went away fail together, and each
  // counting a failure doubled the pause as often (8 lanes twice: minutes, not seconds).
  if (!outcome.status && outcome.unreachable && now_ms >= unreachable_until_ms_) {
    ++unreachable_failures_;
    unreachable_until_ms_ = now_ms + retry_delay(backoff_, unreachable_failures_, std::nullopt, random_).count();
  }
  if (verdict != Verdict::delivered) {
    // The entries held may be stuck behind a failing user or resource: other keys' may wait
    // unmade (catch_up()). Not for an unreachable backend: then no key gets through.
    if (!outcome.unreachable) starved_ = true;
    record_failure(post, outcome, verdict, now_ms);
    return;
  }
  // Deleted with the next look at the outbox: one write transaction per look instead of
  // one per POST, which the writer thread would wait for.
  sent_unflushed_.insert(sent_unflushed_.end(), post.entries.begin(), post.entries.end());
  metrics_.sent.fetch_add(post.ids.size(), std::memory_order_relaxed);
  if (failing_) log::info("forward_recovered").str("destination", settings_.name);
  failing_ = false;
  if (flush_due()) flush();
}

PostScheduler::PartFate PostScheduler::judge(std::span<const store::OutboxEntry* const> part, bool charged,
                                             Verdict verdict, const PostOutcome& outcome, int64_t now_ms) const {
  const config::ForwardSettings& s = settings_;
  if (verdict == Verdict::final) return {true, outcome.error};
  const int64_t charge = charged ? 1 : 0;
  int64_t counted = 0, oldest = INT64_MAX, oldest_id = 0;
  for (const auto* e : part) {
    counted = std::max(counted, e->attempts + charge);
    if (e->created_at_ms < oldest) oldest_id = e->outbox_id;
    oldest = std::min(oldest, e->created_at_ms);
  }
  if (counted >= s.max_attempts) {
    return {true, gave_up_at_max_attempts(part, charge, s.max_attempts) + "; last: " + outcome.error};
  }
  if (now_ms - oldest >= s.max_age_s * 1000) {
    // Each entry counts its own attempts: a part of several names its oldest instead.
    std::string why = part.size() == 1
                          ? "gave up: older than max_age after " + std::to_string(this_attempt(part)) + " attempts"
                          : "gave up: older than max_age (the POST's oldest message " + message_id(oldest_id) + ")";
    return {true, why + "; last: " + outcome.error};
  }
  return {false, outcome.error};
}

Result<void> PostScheduler::kill(const OutgoingPost& post, std::span<const store::OutboxEntry* const> part,
                                 std::optional<int64_t> status, const std::string& why) {
  std::vector<int64_t> ids;
  for (const auto* e : part) ids.push_back(e->outbox_id);
  auto done = outbox_.dead(ids, status, why);
  if (!done) return done;  // still pending: the caller logs forward_outbox_not_updated
  metrics_.dead.fetch_add(ids.size(), std::memory_order_relaxed);
  log::warn("forward_dead")
      .str("destination", settings_.name)
      .str("id", post.webhook_id)
      .num("messages", static_cast<int64_t>(ids.size()))
      .num("attempts", this_attempt(part))  // what dead() leaves them at
      .str("error", why);
  return done;
}

void PostScheduler::note_failing(const OutgoingPost& post, const std::string& error, std::chrono::milliseconds delay) {
  if (!failing_) {
    log::warn("forward_failing")
        .str("destination", settings_.name)
        .str("id", post.webhook_id)
        .str("error", error)
        .num("retry_in_ms", delay.count());
  }
  failing_ = true;
}

void PostScheduler::not_updated(const OutgoingPost& post, const std::string& error) {
  log::error("forward_outbox_not_updated")
      .str("destination", settings_.name)
      .str("id", post.webhook_id)
      .str("error", error);
}

bool PostScheduler::keep_content(const OutgoingPost& post) {
  if (!post.content_unsaved) return true;
  // What this attempt carried, kept for every later one (the same bytes under this id).
  // A failure to write it only means the retry reads the rows again.
  store::PostPin pin{post.entries.front().post_id.value_or(post.ids.front()), {}, {}};
  for (const auto& e : post.entries) {
    pin.ids.push_back(e.outbox_id);
    pin.contents.push_back(e.content.value_or(""));
  }
  if (auto pinned = outbox_.pin({&pin, 1}); !pinned) {
    log::warn("forward_content_not_kept").str("destination", settings_.name).str("error", pinned.error());
    return false;
  }
  return true;
}

bool PostScheduler::split_off_first_key(const OutgoingPost& post, const PostOutcome& outcome, int64_t now_ms) {
  // A POST of several users or resources that the backend failed is not sent again: an id
  // names one content for ever, and as long as it was retried every user in it waited for
  // the one the backend refuses (spec §10: a due entry is never held back by other users').
  // Its first user and resource's entries form a POST again, under an id never used
  // (post_message_id(): "hhf_<first>.1"), with what they carried; the others' leave it and
  // go out in POSTs planned afresh. A POST of one user and resource, the only kind formed
  // again, is never split: an id is formed again at most once.
  const std::optional<std::string>& first_key = post.entries.front().order_key;
  std::vector<const store::OutboxEntry*> kept, leaving;
  for (const auto& e : post.entries) (e.order_key == first_key ? kept : leaving).push_back(&e);
  if (leaving.empty()) return false;
  // What each change carried, kept first (under this POST: a crash before the split retries
  // it whole, with those bytes); the leaving changes take it out with them, so each goes on
  // with the same bytes under its id whatever POST it joins. Read again, a leaving change
  // went out under its id with its row as a later change left it, and the backend, which
  // deduplicates on that id, kept one of two contents. Not kept (the store failed): the
  // POST goes on whole, as when the split cannot be written.
  if (!keep_content(post)) return false;
  store::PostSplit split;
  split.kept.post_id = -post.ids.front();
  split.status = status_of(outcome);
  split.error = outcome.error;
  for (const auto* e : kept) split.kept.ids.push_back(e->outbox_id);
  for (const auto* e : leaving) split.leaving.push_back(e->outbox_id);
  // The first key's part waits as the POST would have (Retry-After, else the backoff); the
  // others the plain backoff, whatever the answer: a Retry-After may be about one user
  // (503 or 429 with Retry-After: an hour, for one user held the others for the hour, and
  // again at each split after it, since the leaving entries are planned together again).
  const int64_t attempt = this_attempt(kept);
  const auto kept_delay = retry_delay(backoff_, attempt, outcome.retry_after_s, random_);
  const auto leaving_delay = retry_delay(backoff_, attempt, std::nullopt, random_);
  split.kept_due_at_ms = now_ms + kept_delay.count();
  split.leaving_due_at_ms = now_ms + leaving_delay.count();
  if (auto done = outbox_.split(split); !done) {
    // Nothing changed: the POST goes on whole, under its id, as before a split.
    log::warn("forward_post_not_split").str("destination", settings_.name).str("error", done.error());
    return false;
  }
  // No answer: the backend may be hanging on the first key's user. Its other resources,
  // among the leaving entries, go out without other users until its part is answered (or
  // dies): planned beside them again, they made each wait another timeout_ms.
  const std::optional<std::string>& first_user = post.entries.front().user_id;
  if (!outcome.status && first_user && !first_user->empty()) {
    alone_users_.insert_or_assign(*first_user, FirstPart{post_message_id(split.kept.post_id), split.kept.post_id});
  }
  // Neither part is charged the attempt, which may have failed for a user of the other
  // (with several failing users in a POST, a healthy one paid an attempt per split and
  // died of them; a healthy first user died of another's 410 at max_attempts = 1): each
  // goes out again without the other, and the first key's part, alone, is charged its own
  // answers from then on. Each is judged by its own entries' ages (a leaving entry alone:
  // one past max_age dies now, out of any POST, and `forward requeue` plans it afresh).
  const config::ForwardSettings& s = settings_;
  Result<void> written;
  if (const PartFate fate = judge(kept, false, Verdict::retry, outcome, now_ms); fate.dies) {
    written = kill(post, kept, split.status, fate.error);
    release_alone_user(post_message_id(split.kept.post_id));
  } else {
    note_failing(post, fate.error, kept_delay);
  }
  std::vector<const store::OutboxEntry*> too_old;
  for (const auto* e : leaving) {
    if (now_ms - e->created_at_ms >= s.max_age_s * 1000) too_old.push_back(e);
  }
  if (written && !too_old.empty()) {
    written = kill(post, too_old, split.status, "gave up: older than max_age; last: " + outcome.error);
  }
  // The split and the due times stand: what was not written dies at a later failure.
  if (!written) not_updated(post, written.error());
  return true;
}

void PostScheduler::record_failure(const OutgoingPost& post, const PostOutcome& outcome, Verdict verdict,
                                   int64_t now_ms) {
  failed_since_step_ = true;
  // Split whenever a POST that went out failed, whatever the failure (decision 083): an
  // answer to retry, a final answer (it may name one user only: the others are not killed
  // with it) and a timeout or a lost connection (as long as it was retried whole, every
  // user in it waited for the one the backend hangs on). A backend that applied it
  // deduplicates the changes sent again under new POST ids by their own ids (each change
  // keeps its `id`). Not when it never reached the backend (no connection: the whole
  // destination pauses; the body could not be made): its id was never sent.
  const bool went_out = outcome.status.has_value() ||
                        (!outcome.unreachable && !outcome.store_failed && !outcome.undeliverable);
  if (went_out && split_off_first_key(post, outcome, now_ms)) return;
  // Whole (one user and resource, or not split): it goes on while all of its entries may,
  // each counting the attempt. A POST of one user and resource keeps its verdict (a final
  // answer kills it); one of several that went out but could not be split (the store
  // failed) is retried whole, since a final answer may have been one user's alone.
  const bool several_keys = std::any_of(post.entries.begin(), post.entries.end(), [&](const auto& e) {
    return e.order_key != post.entries.front().order_key;
  });
  if (went_out && several_keys) verdict = Verdict::retry;
  keep_content(post);
  std::vector<const store::OutboxEntry*> whole;
  for (const auto& e : post.entries) whole.push_back(&e);
  const PartFate fate = judge(whole, true, verdict, outcome, now_ms);
  Result<void> written;
  if (fate.dies) {
    written = kill(post, whole, status_of(outcome), fate.error);
    release_alone_user(post.webhook_id);
  } else {
    const auto delay = retry_delay(backoff_, this_attempt(whole), outcome.retry_after_s, random_);
    written = outbox_.retry_later(post.ids, now_ms + delay.count(), status_of(outcome), fate.error);
    note_failing(post, fate.error, delay);
  }
  // Nothing changed in the store: the entries are still pending as they were and go out
  // again, pinned to their POST (the backend deduplicates on its id).
  if (!written) not_updated(post, written.error());
}

}  // namespace hh::forward
