#pragma once
// store::DeliveryQuery for every backend: an inbox row by message id, and the rows received
// in a time window in seq order (`healthhook capture`, `healthhook query deliveries`) or
// newest first below a seq (the console's search, GET /v1/deliveries). The
// window is read along the inbox's primary key between the first and last seq received in
// it (an index-only lookup in deliveries_received_at), not in time order: sorting whole
// rows, bodies included, by seq would cost far more. A search by user tells each row
// whether it is one of the users' as `purge-user` would (store/delivery_users.h): the
// user columns, looked up by the row's seq in the same statement, then the body only
// where no column can say.
//
// Lifetime: the session must outlive the query; one thread at a time.
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/json_writer.h"
#include "store/damaged_file.h"
#include "store/delivery_users.h"
#include "store/queries/listings.h"
#include "store/queries/query_args.h"
#include "store/read_query_common.h"
#include "store/read_store.h"
#include "store/schema/dialect.h"

namespace hh::store {

template <typename Reads>
class DeliveryQueryOf final : public DeliveryQuery {
 public:
  explicit DeliveryQueryOf(typename Reads::Session& session)
      : statements_(session, sql(), RowSize::with_bodies) {}

  Result<bool> find(std::string_view message_id, StoredDelivery& row) override {
    return statements_.find(delivery_by_id, QueryArgs().add(message_id),
                            [&row](const auto& s) { read_delivery(s, row); });
  }

  Result<void> start_export(const DeliveryFilter& filter, int64_t& first_seq, int64_t& last_seq) override {
    walk_.reset();
    searched_users_.clear();
    if (auto started = start_window(filter, delivery_window, std::nullopt, first_seq, last_seq); !started) {
      return started;
    }
    walk_ = Walk{filter, last_seq};
    return {};
  }

  Result<void> start_newest_first(const DeliveryFilter& filter, std::optional<int64_t> before_seq) override {
    walk_.reset();
    searched_users_ = filter.user_ids;
    int64_t first_seq = 0, last_seq = 0;
    return start_window(filter, delivery_window_newest_first, before_seq, first_seq, last_seq);
  }

  Result<bool> next(StoredDelivery& row) override {
    auto more = statements_.next([this, &row](const auto& s) {
      read_delivery(s, row);
      if (!searched_users_.empty()) row.of_searched_users = of_searched_users(s, row);
    });
    if (!more || !walk_) return more;
    if (*more) {
      if (row.seq <= walk_->seq) {
        const int64_t before = walk_->seq;
        walk_.reset();
        return damaged("the deliveries are read out of order (seq " + std::to_string(row.seq) + " after seq " +
                       std::to_string(before) + ")");
      }
      walk_->seq = row.seq;
      ++walk_->read;
      return true;
    }
    const Walk walk = std::move(*walk_);
    walk_.reset();
    if (auto checked = check_walk(walk); !checked) return fail(checked);
    return false;
  }
  void finish() override {
    walk_.reset();
    searched_users_.clear();
    statements_.finish();
  }

 private:
  // An export's walk along the primary key, checked as it goes and at its end: a damaged
  // page can end it early, make it skip rows or read rows twice, without an error from
  // the database (SQLite; decision 077). Read inside a ReadSnapshot, so that the checks'
  // own queries see what the walk saw.
  struct Walk {
    DeliveryFilter filter;
    int64_t last_seq = 0;  // the newest seq received in the window
    int64_t seq = 0;       // the last row read
    int64_t read = 0;      // rows read
  };

  // A row of the search by user: recorded as one of theirs by a column (rule 1 of
  // store/delivery_users.h, the statement's last column), else by its body where no column
  // can say (rule 2).
  template <typename Columns>
  bool of_searched_users(const Columns& s, const StoredDelivery& row) const {
    if (s.column_int(kRecordedUserColumn) != 0) return true;
    return body_tells_delivery_users(row.status.value_or("pending"), row.body_removed_at_ms.has_value()) &&
           body_names_one_of(row.origin, row.headers, row.body, searched_users_);
  }

  static Error damaged(const std::string& what) {
    return fail(ErrorKind::io, what + ": " + damaged_file());
  }

  Result<void> check_walk(const Walk& walk) {
    // The newest row the filter takes, found from the other end (a descent from the root),
    // is the last one the walk read.
    if (walk.last_seq != 0 && walk.seq != walk.last_seq) {
      int64_t first_seq = 0, last_seq = 0;
      auto started = start_window(walk.filter, delivery_window_newest_first, walk.last_seq + 1, first_seq, last_seq);
      if (!started) return started;
      StoredDelivery newest;
      auto found = statements_.next([&newest](const auto& s) { read_delivery(s, newest); });
      statements_.finish();
      if (!found) return fail(found);
      if (*found && newest.seq > walk.seq) {
        return damaged("the deliveries cannot be read past seq " + std::to_string(walk.seq) + ", though seq " +
                       std::to_string(newest.seq) + " is there");
      }
    }
    // Without a filter on the event type or status the walk read every row of the window:
    // as many as are found through the received_at index (a skip in its middle).
    if (!walk.filter.event_type_glob && !walk.filter.status) {
      int64_t counted = 0;
      QueryArgs args;
      args.add(since_of(walk.filter)).add(until_of(walk.filter)).add(int64_t{walk.filter.webhooks_only ? 1 : 0});
      auto read = statements_.lookup(delivery_count, args,
                                     [&](const auto& s) { counted = s.column_optional_int(0).value_or(0); });
      if (!read) return fail(read);
      if (counted != walk.read) {
        return damaged("read " + std::to_string(walk.read) + " deliveries where the index of the inbox counts " +
                       std::to_string(counted));
      }
    }
    return {};
  }

  enum Statement : size_t {
    delivery_by_id,
    delivery_bounds,
    delivery_window,
    delivery_window_newest_first,
    delivery_count
  };

  static int64_t since_of(const DeliveryFilter& filter) {
    return filter.since_ms.value_or(std::numeric_limits<int64_t>::min());
  }
  static int64_t until_of(const DeliveryFilter& filter) {
    return filter.until_ms.value_or(std::numeric_limits<int64_t>::max());
  }

  Result<void> start_window(const DeliveryFilter& filter, Statement statement, std::optional<int64_t> before_seq,
                            int64_t& first_seq, int64_t& last_seq) {
    statements_.finish();
    const int64_t since = since_of(filter);
    const int64_t until = until_of(filter);
    first_seq = 0;
    last_seq = 0;
    auto read = statements_.lookup(delivery_bounds, QueryArgs().add(since).add(until), [&](const auto& s) {
      first_seq = s.column_optional_int(0).value_or(0);
      last_seq = s.column_optional_int(1).value_or(0);
    });
    if (!read) return fail(read);
    std::optional<std::string> pattern;
    if (filter.event_type_glob) pattern = Reads::event_type_pattern(*filter.event_type_glob);
    const int64_t last = before_seq ? std::min(last_seq, *before_seq - 1) : last_seq;
    QueryArgs args;
    args.add(first_seq).add(last).add(since).add(until).add(pattern);
    args.add(int64_t{filter.webhooks_only ? 1 : 0}).add(filter.status);
    std::optional<std::string> users;  // ?8: the search's users as a JSON array, viewed until started
    if (statement == delivery_window_newest_first) {
      if (!filter.user_ids.empty()) users = user_ids_json(filter.user_ids);
      args.add(users);
    }
    return statements_.start(statement, args, Fetch::cursor);
  }

  static std::string user_ids_json(const std::vector<std::string>& user_ids) {
    std::string json = "[";
    for (const std::string& user : user_ids) {
      if (json.size() > 1) json.push_back(',');
      json::append_string(json, user);
    }
    json.push_back(']');
    return json;
  }

  // Rule 1 of store/delivery_users.h for the row being read: 1 when a column records it as
  // one of the users of ?8 (each place looked up by the row's seq: no index by user is
  // needed), 0 otherwise or without a search by user (?8 NULL).
  static std::string recorded_user_column() {
    std::string any;
    for (const DeliveryUserRecord& record : kDeliveryUserRecords) {
      if (!any.empty()) any += " OR ";
      any += "EXISTS (" + delivery_user_seqs(record, " IN " + std::string(Reads::kSearchedUserIds)) + " AND " +
             std::string(record.seq_column) + " = deliveries.seq)";
    }
    return "CASE WHEN ?8::json IS NULL THEN 0 WHEN " + any + " THEN 1 ELSE 0 END";
  }

  static const std::array<std::string, 5>& sql() {
    static const std::array<std::string, 5> built = [] {
      const std::string columns =
          "SELECT seq, message_id, origin, received_at, webhook_timestamp, event_type, status, family, error, "
          "headers, body, body_removed_at, body_sha256";
      const std::string select = columns + " FROM deliveries ";
      const std::string in_window =
          "WHERE seq >= ?1 AND seq <= ?2 AND " + std::string(Reads::kDeliveryWindow) +
          " AND (?6::bigint = 0 OR origin = 'webhook') AND (?7::text IS NULL OR status = ?7) ";
      const std::string window = select + in_window;
      return std::array<std::string, 5>{
          schema::spell(select + "WHERE message_id = ?1", Reads::dialect),
          schema::spell("SELECT min(seq), max(seq) FROM inbox WHERE received_at >= ?1 AND received_at < ?2",
                        Reads::dialect),
          schema::spell(window + "ORDER BY seq", Reads::dialect),
          // Newest first: a walk down the primary key, never a sort; the search's users at ?8.
          schema::spell(columns + ", " + recorded_user_column() + " FROM deliveries " + in_window + "ORDER BY seq DESC",
                        Reads::dialect),
          schema::spell("SELECT count(*) FROM inbox WHERE received_at >= ?1 AND received_at < ?2 "
                        "AND (?3::bigint = 0 OR origin = 'webhook')",
                        Reads::dialect)};
    }();
    return built;
  }

  // The newest-first statement's column after read_delivery's: recorded_user_column().
  static constexpr int kRecordedUserColumn = 13;

  typename Reads::template Listings<5> statements_;
  std::optional<Walk> walk_;  // while an export is read
  std::vector<std::string> searched_users_;  // while a search by user is read
};

}  // namespace hh::store
