#pragma once
// Appends rows to the change feed (`changes`; store/schema/ says what each op and key
// means), for every backend. Called inside the transaction that wrote the derived row, so
// the feed and the tables never disagree.
//
// Immediate mode (the default): every append() is inserted at once.
// Deferred mode (the processor's): append() keeps a copy of the change, and flush() hands
// the kept changes, in order, to the backend's `Inserts` (a ChangeInsertsOf<its state>,
// below), which writes them in as few statements as its engine allows; the caller flushes
// before it commits. Change ids come out the same as with immediate inserts (same rows,
// same order, nothing else writes `changes` in between).
//
// Lifetime: the connection must outlive this object. Used on the writer thread only.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/derived/derived_parts.h"

namespace hh::store {

// Changes kept for a later insert: copies of their texts, back to back in one string.
class KeptChanges {
 public:
  void keep(const Change& change) {
    changes_.push_back(change);
    offsets_.push_back({keep_text(change.table), keep_text(change.row_key), keep_text(change.op),
                        change.user_id ? keep_text(*change.user_id) : 0});
  }
  // Valid until the next keep() or clear(): the texts point into this object's copy.
  std::span<const Change> changes() {
    for (size_t i = 0; i < changes_.size(); ++i) {
      Change& change = changes_[i];
      const Offsets& at = offsets_[i];
      change.table = text_at(at.table, change.table);
      change.op = text_at(at.op, change.op);
      if (change.row_key.data() != nullptr) change.row_key = text_at(at.row_key, change.row_key);
      if (change.user_id) change.user_id = text_at(at.user, *change.user_id);
    }
    return changes_;
  }
  size_t size() const { return changes_.size(); }
  bool empty() const { return changes_.empty(); }
  void clear() {
    changes_.clear();
    offsets_.clear();
    text_.clear();
  }

 private:
  struct Offsets {
    size_t table, row_key, op, user;
  };
  size_t keep_text(std::string_view text) {
    const size_t at = text_.size();
    text_.append(text);
    return at;
  }
  std::string_view text_at(size_t at, std::string_view original) const { return {text_.data() + at, original.size()}; }

  std::vector<Change> changes_;  // their views point into the caller's memory until changes()
  std::vector<Offsets> offsets_;
  std::string text_;
};

// Inserts changes into `changes`. `State` is what the backend's statements need
// (store/sqlite/derived/change_inserts.h, store/postgres/derived/pg_change_inserts.h): its
// `Connection` type, kMaxBuffered and whatever it keeps between calls. The backend defines
// create() and insert() for its State (explicit specialisations, declared in its header,
// defined in its .cpp).
template <typename State>
class ChangeInsertsOf {
 public:
  // Kept changes beyond which ChangeFeedOf::append() flushes.
  static constexpr size_t kMaxBuffered = State::kMaxBuffered;

  static Result<ChangeInsertsOf> create(typename State::Connection& db);
  // Inserts `changes` in order.
  Result<void> insert(std::span<const Change> changes);

 private:
  explicit ChangeInsertsOf(State state) : state_(std::move(state)) {}
  State state_;
};

template <typename Inserts>
class ChangeFeedOf {
 public:
  template <typename Connection>
  static Result<ChangeFeedOf> create(Connection& db) {
    auto inserts = Inserts::create(db);
    if (!inserts) return fail(inserts);
    return ChangeFeedOf(std::move(*inserts));
  }

  Result<void> append(const Change& change) {
    // A key without text (a null view) must fail on this delivery, as an immediate insert
    // would (NOT NULL), not later on a flush no delivery is blamed for.
    if (!deferred_ || change.row_key.data() == nullptr) {
      if (auto flushed = flush(); !flushed) return flushed;
      return insert(std::span<const Change>(&change, 1));
    }
    kept_.keep(change);
    return kept_.size() >= Inserts::kMaxBuffered ? flush() : Result<void>{};
  }

  // Turning it off flushes nothing: call flush() first.
  void set_deferred(bool deferred) { deferred_ = deferred; }
  // Inserts every kept change, in order.
  Result<void> flush() {
    if (kept_.empty()) return {};
    auto inserted = insert(kept_.changes());
    kept_.clear();
    return inserted;
  }
  // A transaction begins, or the last one rolled back: drops kept changes, and the count
  // of inserted() starts again.
  void discard() {
    kept_.clear();
    inserted_ = 0;
  }
  // The changes inserted since discard(): the transaction's own, the newest rows of the
  // feed while it holds the lock on new ids (PostgreSQL's outbox takes them by this count).
  size_t inserted() const { return inserted_; }

 private:
  explicit ChangeFeedOf(Inserts inserts) : inserts_(std::move(inserts)) {}

  Result<void> insert(std::span<const Change> changes) {
    auto inserted = inserts_.insert(changes);
    if (inserted) inserted_ += changes.size();
    return inserted;
  }

  Inserts inserts_;
  bool deferred_ = false;
  KeptChanges kept_;
  size_t inserted_ = 0;
};

}  // namespace hh::store
