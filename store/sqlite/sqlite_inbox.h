#pragma once
// The inbox on the SQLite write connection. Used only from the thread that owns that
// connection (the writer thread in `serve`, the main thread in `replay`).
#include <functional>

#include "store/inbox.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/outbox/outbox_writer.h"

namespace hh::store {


class SqliteInbox final : public Inbox {
 public:
  // `db` must stay live and migrated while this object exists. `outbox` adds the
  // deliveries-mode forwarding entries of each commit.
  static Result<SqliteInbox> create(sqlite::Connection& db, OutboxWriter outbox);
  static Result<SqliteInbox> create(sqlite::Connection& db) { return create(db, OutboxWriter(db)); }

  Result<std::vector<Appended>> append(std::span<const NewDelivery* const> batch) override;

  Result<std::vector<Appended>> append_with(std::span<const NewDelivery* const> batch,
                                            const AlsoInTransaction& also) override;
  int64_t last_seq() const override { return last_seq_; }
  uint64_t max_delivery_bytes() const override;

 private:
  SqliteInbox(sqlite::Connection& db, sqlite::Statement insert, sqlite::Statement find, OutboxWriter outbox,
              int64_t last_seq)
      : db_(&db),
        insert_(std::move(insert)),
        find_existing_(std::move(find)),
        outbox_(std::move(outbox)),
        last_seq_(last_seq) {}
  sqlite::Connection* db_;
  sqlite::Statement insert_;
  sqlite::Statement find_existing_;
  OutboxWriter outbox_;
  int64_t last_seq_;
};

std::string_view origin_name(Origin origin);

}  // namespace hh::store
