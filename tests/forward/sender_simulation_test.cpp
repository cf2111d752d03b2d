// The sender (forward/post_scheduler.h: the planner, the pinning of POSTs, what each
// answer does to the outbox) against a model of a backend that deduplicates by
// each change's id, over many random schedules of answers, in simulated time (no sleeping).
// The store is real (a SQLite file, the sender's own connection, entries added by another
// connection as the writer does); only the transport is a model: each POST's answer is
// drawn from the schedule — 2xx, 4xx, 5xx with and without Retry-After, 429, a timeout or
// a dropped connection after the backend applied the POST or before, a backend that
// cannot be reached — and the sender restarts now and then (a crash, or a stop), losing
// what it had in flight. Some schedules have a disk budget that drops entries.
//
// Checked:
//  - a webhook-id never carries two contents (every request, as it arrives);
//  - in changes mode, a change's id never carries two contents either, in whatever POST it
//    goes out (each read of the rows is a new version of them here), but for a POST whose
//    attempt a restart cut short (its rows are read again after it: docs/forwarding.md);
//  - no due entry waits behind another key: after each look, while lanes are left free,
//    every key whose first entry is due and not busy went out;
//  - at the end (the backend healthy again, the outbox drained), every entry was applied
//    by the backend exactly once, or is dead in the outbox, or lies in a dropped range;
//  - with `ordered`, each key's entries were applied in outbox order;
//  - no entry counts more attempts than max_attempts.
//
// HEALTHHOOK_SIM_SCHEDULES=N runs N schedules (default 150), HEALTHHOOK_SIM_SEED=S starts
// from seed S (default fixed; "random" for a new one each run). A failure names the seed
// and the schedule; run that seed alone to see it again.
#include <boost/test/results_collector.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
#include "forward/post_scheduler.h"
#include "store/sqlite/database.h"
#include "store/sqlite/outbox/sqlite_outbox.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(sender_simulation_test)

using namespace hh;

namespace {

constexpr uint64_t kDefaultSeed = 20240601;
constexpr size_t kDefaultSchedules = 150;
constexpr const char* kDestination = "sim";

template <typename T>
T must(Result<T> result) {
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  return std::move(result.value());
}
void must(Result<void> result) { BOOST_REQUIRE_MESSAGE(result.ok(), result.error()); }

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  if (std::string_view(text) == "random") return std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  return std::strtoull(text, nullptr, 10);
}

// What the backend does with one POST.
enum class Answer {
  ok,             // 200 (applied, unless its id was applied before)
  unavailable,    // 503
  retry_after,    // 503 with Retry-After
  too_many,       // 429 with Retry-After
  refused,        // 400: final
  applied_timeout,  // applied, but the answer never came (timeout_ms passed)
  lost_timeout,     // never reached the backend's handler, no answer
  applied_dropped,  // applied, then the connection dropped before the answer
  lost_dropped,     // the connection dropped before the backend read it
  unreachable,      // no connection at all
};

// A schedule's answers: weights per kind, drawn per POST.
struct Personality {
  std::vector<double> weights;  // per Answer
  std::optional<std::string> refused_key;  // every POST with this key: 503 + Retry-After an hour
  int64_t refused_until_ms = 0;
};

// The backend: deduplicates by each change's own id (a change applied before is
// acknowledged, not applied again: after a timeout or a lost connection a POST of several
// users is split, decision 083, and what it carried goes out again under new POST ids),
// and remembers what it applied, in order.
struct ModelBackend {
  std::map<std::string, std::vector<int64_t>> contents;  // webhook-id → the entries it carried first
  std::map<int64_t, int> applied;                        // outbox_id → times applied
  std::map<std::string, std::vector<int64_t>> order;     // key → outbox ids in the order applied
  std::map<int64_t, std::string> key_of;                 // outbox_id → key
  std::map<int64_t, std::string> carried;                // changes mode: outbox_id → what it carried first

  // A request arrived with `post` (a test failure when its id carried other entries
  // before, or one of its changes other bytes); `apply`: the backend got as far as applying
  // it (once per id).
  void receive(const forward::OutgoingPost& post, bool apply) {
    auto [it, first] = contents.try_emplace(post.webhook_id, post.ids);
    BOOST_TEST((it->second == post.ids), "webhook-id " << post.webhook_id << " carried two contents");
    for (const auto& e : post.entries) {
      if (e.kind != "change") continue;
      const std::string content = e.content.value_or("(read when sent)");
      auto [was, new_change] = carried.try_emplace(e.outbox_id, content);
      BOOST_TEST(was->second == content, "change " << e.outbox_id << " carried \"" << was->second << "\" in a POST "
                                                   "before, and \"" << content << "\" in " << post.webhook_id);
    }
    if (!apply) return;
    for (const auto& e : post.entries) {
      if (applied.contains(e.outbox_id)) continue;
      ++applied[e.outbox_id];
      order[key_of.at(e.outbox_id)].push_back(e.outbox_id);
    }
  }
};

struct InFlight {
  forward::OutgoingPost post;
  int64_t done_at_ms;
};

class Simulation {
 public:
  Simulation(const std::string& path, uint64_t seed, size_t schedule)
      : path_(path), random_(seed), label_("seed " + std::to_string(seed) + " schedule " + std::to_string(schedule)) {
    std::uniform_int_distribution<int> coin(0, 99);
    settings_.name = kDestination;
    settings_.mode = coin(random_) < 15 ? "deliveries" : "changes";
    settings_.batch = std::vector<int64_t>{1, 2, 3, 5}[static_cast<size_t>(coin(random_) % 4)];
    settings_.ordered = coin(random_) < 85;
    settings_.max_attempts = std::vector<int64_t>{2, 4, 50}[static_cast<size_t>(coin(random_) % 3)];
    settings_.max_age_s = coin(random_) < 20 ? 60 : 3 * 86400;
    settings_.timeout_ms = 1000;
    settings_.concurrency = 1 + coin(random_) % 4;
    settings_.backoff_initial_ms = 100;
    settings_.backoff_max_s = 5;
    keys_ = 1 + coin(random_) % 6;
    entries_ = 10 + static_cast<size_t>(coin(random_) % 40);
    if (coin(random_) < 25) budget_ = 5 + coin(random_) % 15;
    restart_per_mille_ = coin(random_) < 50 ? 10 : 0;
    personality_.weights = {50, 8, 4, 3, 3, 5, 5, 3, 3, 2};
    for (auto& w : personality_.weights) w *= 0.5 + coin(random_) / 100.0;
    if (coin(random_) < 30) {
      personality_.refused_key = key_name(0);
      personality_.refused_until_ms = now_ + 20'000 + coin(random_) * 300;
    }
    writer_.emplace(must(store::open_for_writing(path_, {})));
    // The model is about what the sender decides, not about durability: no syncs.
    must(writer_->exec("PRAGMA synchronous = OFF"));
    insert_ = must(writer_->prepare(
        "INSERT INTO outbox (destination, kind, seq, table_name, row_key, op, order_key, created_at, next_attempt_at, "
        "user_id) VALUES (?1, ?2, ?3, ?4, ?5, 'insert', ?6, ?7, ?7, ?8)"));
    next_due_ = must(writer_->prepare("SELECT min(next_attempt_at) FROM outbox WHERE state = 'pending' "
                                      "AND next_attempt_at > ?1"));
    start_sender();
  }

  const std::string& label() const { return label_; }

  void run() {
    std::uniform_int_distribution<int> coin(0, 999);
    std::uniform_int_distribution<int64_t> gap(0, 3000);
    int64_t next_arrival = now_;
    size_t arrived = 0;
    int64_t next_budget_check = now_;
    for (int step = 0; step < 100'000; ++step) {
      const bool draining = arrived == entries_;
      if (draining) {
        healthy_ = true;
        if (in_flight_.empty() && pending() == 0) break;
      }
      // On to the next event: an arrival, a POST's end, an entry falling due, the end of a
      // pause. Between them the real sender's looks (every 100 ms) find nothing new.
      int64_t next = INT64_MAX;
      if (!draining) next = std::min(next, next_arrival);
      for (const auto& f : in_flight_) next = std::min(next, f.done_at_ms);
      if (in_flight_.size() < static_cast<size_t>(settings_.concurrency)) {
        next = std::min(next, std::max(next_due(), scheduler_->paused_until_ms()));
      }
      if (budget_) next = std::min(next, next_budget_check);
      BOOST_REQUIRE_MESSAGE(next != INT64_MAX, label_ << ": nothing left to happen, " << pending() << " pending");
      now_ = std::max(now_, next);
      while (!draining && arrived < entries_ && next_arrival <= now_) {
        add_entry(arrived++);
        next_arrival = now_ + gap(random_);
      }
      finish_due_posts();
      if (restart_per_mille_ > 0 && coin(random_) < restart_per_mille_) restart();
      if (budget_ && now_ >= next_budget_check) {
        check_budget();
        next_budget_check = now_ + 2000;
      }
      look();
    }
    BOOST_REQUIRE_MESSAGE(in_flight_.empty() && pending() == 0, label_ << ": the outbox did not drain");
    scheduler_->flush();
    check_end();
  }

 private:
  // Two resources a user: a split keeps one apart, the user's other goes on (decision 083).
  std::string key_name(size_t k) const { return user_name(k) + (k % 2 == 0 ? "/sleep" : "/steps"); }
  std::string user_name(size_t k) const { return "user-" + std::to_string(k / 2); }

  void start_sender() {
    outbox_ = must(store::open_sqlite_outbox(path_, store::OutboxUse::sender));
    scheduler_ = std::make_unique<forward::PostScheduler>(settings_, *outbox_, metrics_, random_());
    // Each read of the rows sees them as changed since the last: a change read twice would
    // carry two contents.
    scheduler_->render_contents_with([this](std::span<const store::OutboxEntry* const> entries)
                                         -> Result<std::vector<std::string>> {
      ++reads_;
      std::vector<std::string> contents;
      for (const auto* e : entries) {
        contents.push_back("change " + std::to_string(e->outbox_id) + " read " + std::to_string(reads_));
      }
      return contents;
    });
  }

  void add_entry(size_t n) {
    std::uniform_int_distribution<size_t> key(0, keys_ - 1);
    const size_t drawn = key(random_);
    const std::string k = key_name(drawn);
    const int64_t seq = ++seq_;
    const bool deliveries = settings_.mode == "deliveries";
    insert_->bind(1, std::string_view(kDestination))
        .bind(2, std::string_view(deliveries ? "delivery" : "change"))
        .bind(3, seq)
        .bind(4, std::string_view(deliveries ? "deliveries" : "summaries"))
        .bind(5, std::string_view((deliveries ? "msg-" : "sleep/") + std::to_string(n)))
        .bind(6, std::string_view(k))
        .bind(7, now_)
        .bind(8, std::string_view(user_name(drawn)));
    must(insert_->run());
    const int64_t id = writer_->last_insert_rowid();
    backend_.key_of[id] = k;
    all_.push_back(id);
  }

  // When the next pending entry falls due (after now); INT64_MAX when none will.
  int64_t next_due() {
    next_due_->bind(1, now_);
    int64_t due = INT64_MAX;
    must(next_due_->first_row([&](const sqlite::Statement& s) {
      if (!s.column_is_null(0)) due = s.column_int(0);
    }));
    return due;
  }

  int64_t pending() {
    return writer_->query_int("SELECT count(*) FROM outbox WHERE state = 'pending'").value().value_or(0);
  }

  Answer draw(const forward::OutgoingPost& post) {
    if (healthy_) return Answer::ok;
    if (personality_.refused_key && now_ < personality_.refused_until_ms) {
      for (const auto& e : post.entries) {
        if (e.order_key == personality_.refused_key) return Answer::retry_after;
      }
    }
    std::discrete_distribution<int> kind(personality_.weights.begin(), personality_.weights.end());
    return static_cast<Answer>(kind(random_));
  }

  // The POSTs whose answer is due: the backend acts, the sender records.
  void finish_due_posts() {
    std::vector<InFlight> done;
    std::erase_if(in_flight_, [&](InFlight& f) {
      if (f.done_at_ms > now_) return false;
      done.push_back(std::move(f));
      return true;
    });
    for (const InFlight& f : done) {
      const Answer answer = draw(f.post);
      forward::PostOutcome outcome;
      const bool refused_key = personality_.refused_key && now_ < personality_.refused_until_ms &&
                               answer == Answer::retry_after;
      switch (answer) {
        case Answer::ok: outcome.status = 200; break;
        case Answer::unavailable: outcome.status = 503; break;
        case Answer::retry_after:
          outcome.status = 503;
          outcome.retry_after_s = refused_key ? 3600 : std::uniform_int_distribution<int64_t>(1, 30)(random_);
          break;
        case Answer::too_many:
          outcome.status = 429;
          outcome.retry_after_s = std::uniform_int_distribution<int64_t>(1, 10)(random_);
          break;
        case Answer::refused: outcome.status = 400; break;
        case Answer::applied_timeout:
        case Answer::lost_timeout: outcome.failure = "timeout"; break;
        case Answer::applied_dropped:
        case Answer::lost_dropped: outcome.failure = "transport"; break;
        case Answer::unreachable:
          outcome.failure = "connect";
          outcome.unreachable = true;
          break;
      }
      if (!outcome.status) outcome.error = outcome.failure;
      const bool reached = answer != Answer::unreachable && answer != Answer::lost_dropped &&
                           answer != Answer::lost_timeout;
      const bool applies = answer == Answer::ok || answer == Answer::applied_timeout ||
                           answer == Answer::applied_dropped;
      if (reached) backend_.receive(f.post, applies);
      scheduler_->finished(f.post, outcome, now_);
    }
  }

  // The sender stops (flushing what was delivered) or crashes (not), with POSTs in flight:
  // each reached the backend, or not, and its answer is lost.
  void restart() {
    std::bernoulli_distribution half(0.5);
    for (const InFlight& f : in_flight_) {
      if (half(random_)) backend_.receive(f.post, true);
    }
    in_flight_.clear();
    if (half(random_)) scheduler_->flush();
    // What carries no kept content is read again after the restart: a POST cut short before
    // its answer (the documented exception), and one delivered but not deleted yet (sent
    // once more under its id: the backend has applied it already).
    auto unkept = must(writer_->prepare("SELECT outbox_id FROM outbox WHERE content IS NULL"));
    must(unkept.for_each_row([&](const sqlite::Statement& s) { backend_.carried.erase(s.column_int(0)); }));
    scheduler_.reset();
    outbox_.reset();
    start_sender();
  }

  void check_budget() {
    const int64_t kept = writer_->query_int("SELECT count(*) FROM outbox").value().value_or(0);
    if (kept <= *budget_) return;
    const store::ForwardRule rule{
        .destination = kDestination,
        .mode = settings_.mode == "deliveries" ? store::ForwardMode::deliveries : store::ForwardMode::changes,
        .events = {}};
    must(outbox_->drop_oldest(rule, kept - *budget_, scheduler_->in_flight_ids(), now_));
  }

  void look() {
    const size_t lanes = static_cast<size_t>(settings_.concurrency);
    if (in_flight_.size() >= lanes) return;
    forward::Look look = scheduler_->next_posts(now_, lanes - in_flight_.size());
    BOOST_REQUIRE_MESSAGE(!look.store_failed, label_ << ": the outbox failed");
    std::uniform_int_distribution<int64_t> latency(1, 1500);
    for (auto& post : look.posts) {
      BOOST_TEST(post.entries.size() <= static_cast<size_t>(settings_.mode == "deliveries" ? 1 : settings_.batch));
      in_flight_.push_back(InFlight{std::move(post), now_ + latency(random_)});
    }
    if (in_flight_.size() < lanes && now_ >= scheduler_->paused_until_ms()) check_nothing_due_waits();
  }

  // Lanes are free: every key (every entry, without `ordered`) whose first pending entry
  // is due and not busy went out.
  void check_nothing_due_waits() {
    std::set<int64_t> busy_ids;
    std::set<std::string> busy_keys;
    for (const auto& f : in_flight_) {
      for (const auto& e : f.post.entries) {
        busy_ids.insert(e.outbox_id);
        if (settings_.ordered && e.order_key) busy_keys.insert(*e.order_key);
      }
    }
    const std::string firsts =
        settings_.ordered
            ? "SELECT outbox_id, order_key, next_attempt_at, post_id FROM outbox AS o WHERE state = 'pending' AND "
              "outbox_id = (SELECT min(p.outbox_id) FROM outbox AS p WHERE p.state = 'pending' AND p.order_key = o.order_key)"
            : "SELECT outbox_id, order_key, next_attempt_at, post_id FROM outbox WHERE state = 'pending'";
    if (!firsts_) firsts_ = must(writer_->prepare(firsts));
    sqlite::Statement& stmt = *firsts_;
    std::vector<std::tuple<int64_t, std::string, int64_t, std::optional<int64_t>>> rows;
    must(stmt.for_each_row([&](const sqlite::Statement& s) {
      rows.emplace_back(s.column_int(0), std::string(s.column_text(1)), s.column_int(2), s.column_optional_int(3));
    }));
    for (const auto& [id, key, due, post] : rows) {
      if (due > now_ || busy_ids.contains(id) || busy_keys.contains(key)) continue;
      if (post && post_is_busy(*post, busy_ids, busy_keys)) continue;
      BOOST_ERROR(label_ << ": entry " << id << " of " << key << " was due at " << due << " and waited at " << now_
                         << " with a lane free");
    }
  }

  bool post_is_busy(int64_t post, const std::set<int64_t>& busy_ids, const std::set<std::string>& busy_keys) {
    if (!members_) {
      members_ = must(writer_->prepare("SELECT outbox_id, order_key, next_attempt_at FROM outbox WHERE post_id = ?1 "
                                       "AND state = 'pending'"));
    }
    sqlite::Statement& stmt = *members_;
    stmt.bind(1, post);
    bool busy = false;
    must(stmt.for_each_row([&](const sqlite::Statement& s) {
      busy = busy || busy_ids.contains(s.column_int(0)) || busy_keys.contains(std::string(s.column_text(1))) ||
             s.column_int(2) > now_;
    }));
    return busy;
  }

  void check_end() {
    std::map<int64_t, std::string> states;
    std::map<int64_t, int64_t> stored_attempts;
    auto stmt = must(writer_->prepare("SELECT outbox_id, state, attempts FROM outbox"));
    must(stmt.for_each_row([&](const sqlite::Statement& s) {
      states[s.column_int(0)] = std::string(s.column_text(1));
      stored_attempts[s.column_int(0)] = s.column_int(2);
    }));
    int64_t dropped = 0;
    auto ranges = must(writer_->prepare("SELECT coalesce(sum(entries), 0) FROM outbox_dropped"));
    must(ranges.first_row([&](const sqlite::Statement& s) { dropped = s.column_int(0); }));
    int64_t missing = 0;
    for (const int64_t id : all_) {
      const int applied = backend_.applied.contains(id) ? backend_.applied.at(id) : 0;
      BOOST_TEST(applied <= 1, label_ << ": entry " << id << " applied " << applied << " times");
      if (applied == 1) continue;
      if (states.contains(id)) {
        BOOST_TEST(states.at(id) == "dead", label_ << ": entry " << id << " neither applied nor dead");
        continue;
      }
      ++missing;  // neither applied nor in the outbox: it must have been dropped
    }
    BOOST_TEST(missing <= dropped, label_ << ": " << missing << " entries vanished, " << dropped << " dropped");
    if (!budget_) BOOST_TEST(missing == 0, label_);
    for (const auto& [id, n] : stored_attempts) {
      BOOST_TEST(n <= settings_.max_attempts, label_ << ": entry " << id << " has " << n << " attempts");
    }
    if (settings_.ordered) {
      for (const auto& [key, ids] : backend_.order) {
        BOOST_TEST(std::is_sorted(ids.begin(), ids.end()), label_ << ": " << key << " applied out of order");
      }
    }
  }

  const std::string path_;
  std::mt19937_64 random_;
  const std::string label_;
  config::ForwardSettings settings_;
  size_t keys_ = 1, entries_ = 10;
  std::optional<int64_t> budget_;  // entries the outbox may keep
  int restart_per_mille_ = 0;
  Personality personality_;
  bool healthy_ = false;  // draining: every answer is a 200
  int64_t now_ = 1'700'000'000'000;
  int64_t seq_ = 0;
  int64_t reads_ = 0;  // reads of the rows so far (changes mode): each sees a new version of them
  std::optional<sqlite::Connection> writer_;
  std::optional<sqlite::Statement> insert_, next_due_, firsts_, members_;
  std::unique_ptr<store::Outbox> outbox_;
  forward::DestinationMetrics metrics_{kDestination};
  std::unique_ptr<forward::PostScheduler> scheduler_;
  std::vector<InFlight> in_flight_;
  ModelBackend backend_;
  std::vector<int64_t> all_;
};

}  // namespace

BOOST_AUTO_TEST_CASE(every_change_applied_once_or_visibly_dead_or_dropped_in_order_and_nothing_waits) {
  const uint64_t seed = env_number("HEALTHHOOK_SIM_SEED", kDefaultSeed);
  const auto schedules = static_cast<size_t>(env_number("HEALTHHOOK_SIM_SCHEDULES", kDefaultSchedules));
  BOOST_TEST_MESSAGE("sender simulation: seed " << seed << ", " << schedules << " schedules");
  test::TempDir dir;
  // A database per schedule (ids, marks and ranges start afresh), copied from one migrated
  // once.
  const std::string migrated = dir.file("migrated.db");
  {
    auto db = store::open_for_writing(migrated, {});
    BOOST_REQUIRE_MESSAGE(db, db.error());
    BOOST_REQUIRE(db->exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  }
  // Thousands of failures are logged as warnings: only errors here.
  const log::Level level = log::level();
  log::set_level(log::Level::error);
  struct RestoreLevel {
    log::Level level;
    ~RestoreLevel() { log::set_level(level); }
  } restore{level};
  for (size_t schedule = 0; schedule < schedules; ++schedule) {
    const std::string path = dir.file("sim-" + std::to_string(schedule) + ".db");
    std::filesystem::copy_file(migrated, path);
    {
      Simulation simulation(path, seed + schedule, schedule);
      BOOST_TEST_CONTEXT(simulation.label()) { simulation.run(); }
    }
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
    if (boost::unit_test::framework::current_test_case().p_id &&
        !boost::unit_test::results_collector.results(boost::unit_test::framework::current_test_case().p_id).passed()) {
      std::fprintf(stderr, "sender simulation: first failing schedule: HEALTHHOOK_SIM_SEED=%llu HEALTHHOOK_SIM_SCHEDULES=1\n",
                   static_cast<unsigned long long>(seed + schedule));
      break;
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
