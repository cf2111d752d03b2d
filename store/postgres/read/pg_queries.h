#pragma once
// The PostgreSQL read queries other than samples and records (store/read_store.h), with
// the same rows in the same order as SQLite's (store/sqlite/queries/): summaries, stream
// points, the change feed, inbox rows and a user's lab order ids. Exports read through a
// cursor (read_session.h); pages with a LIMIT and lookups read their result at once. Text
// keys sort bytewise (COLLATE "C"), as SQLite's BINARY collation does.
//
// Lifetime: the session must outlive the queries; one thread at a time.
#include <optional>
#include <string>

#include "store/postgres/read/read_session.h"
#include "store/read_store.h"

namespace hh::store::pgread {

// Reads from a cursor (exports) or a whole result (pages, lookups), whichever was started.
class TwoWayListing {
 public:
  TwoWayListing(ReadSession& session, int fetch) : cursor_(session, fetch), listing_(session) {}
  Result<void> open_cursor(std::string_view sql, const pg::Params& params);
  Result<void> open_listing(std::string_view sql, const pg::Params& params);
  Result<bool> next(ResultRow& row);
  void close();

 private:
  Cursor cursor_;
  Listing listing_;
  bool from_cursor_ = false;
};

class PgSummaryQuery final : public SummaryQuery {
 public:
  explicit PgSummaryQuery(ReadSession& session) : rows_(session, kFetchRows) {}
  Result<void> start_export(const SummaryFilter& filter) override;
  Result<void> start_page(const SummaryFilter& filter, const std::optional<SummaryPosition>& after,
                          int64_t limit) override;
  Result<void> start_by_key(std::string_view change_key) override;
  Result<bool> next(StoredSummary& row) override;
  void finish() override { rows_.close(); }

 private:
  TwoWayListing rows_;
};

class PgStreamQuery final : public StreamQuery {
 public:
  explicit PgStreamQuery(ReadSession& session) : rows_(session, kFetchRows), lookup_(session) {}
  Result<void> start_export(const StreamFilter& filter) override;
  Result<void> start_page(std::string_view workout_id, std::optional<int64_t> after_idx, int64_t limit) override;
  Result<bool> next(StoredStreamPoint& row) override;
  void finish() override { rows_.close(); }
  Result<bool> find_workout(std::string_view workout_id, StoredWorkoutStream& row) override;

 private:
  TwoWayListing rows_;
  Listing lookup_;
};

class PgChangeQuery final : public ChangeQuery {
 public:
  explicit PgChangeQuery(ReadSession& session) : session_(&session), page_(session) {}
  using ChangeQuery::start_page;
  Result<void> start_page(const ChangePosition& from, int64_t limit) override;
  Result<bool> next(StoredChange& row) override;
  void finish() override { page_.close(); }
  bool ends_inside_seq() const override { return ends_inside_seq_; }

 private:
  ReadSession* session_;
  Listing page_;
  bool ends_inside_seq_ = false;
};

class PgDeliveryQuery final : public DeliveryQuery {
 public:
  explicit PgDeliveryQuery(ReadSession& session)
      : session_(&session), window_(session, kFetchDeliveries), lookup_(session) {}
  Result<bool> find(std::string_view message_id, StoredDelivery& row) override;
  Result<void> start_export(const DeliveryFilter& filter, int64_t& first_seq, int64_t& last_seq) override;
  Result<void> start_newest_first(const DeliveryFilter& filter, std::optional<int64_t> before_seq) override;
  Result<bool> next(StoredDelivery& row) override;
  void finish() override { window_.close(); }

 private:
  Result<void> start_window(const DeliveryFilter& filter, std::string_view sql, std::optional<int64_t> before_seq,
                            int64_t& first_seq, int64_t& last_seq);
  ReadSession* session_;
  Cursor window_;
  Listing lookup_;
};

class PgUserOrderIdsQuery final : public UserOrderIdsQuery {
 public:
  explicit PgUserOrderIdsQuery(ReadSession& session) : ids_(session) {}
  Result<void> start(std::string_view user_id, std::optional<std::string_view> after_order_id,
                     int64_t limit) override;
  Result<bool> next(std::string_view& order_id) override;
  void finish() override { ids_.close(); }

 private:
  Listing ids_;
};

}  // namespace hh::store::pgread
