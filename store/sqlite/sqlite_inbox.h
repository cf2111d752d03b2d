#pragma once
// The inbox on the SQLite write connection. Used only from the thread that owns that
// connection (the writer thread in `serve`, the main thread in `replay`).
#include <functional>

#include "store/inbox.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/outbox/outbox_entries.h"

namespace hh::store {


class SqliteInbox final : public Inbox {
 public:
  // `db` must stay live and migrated while this object exists. `entries` makes the
  // deliveries-mode forwarding entries of each commit (while the writer makes them).
  static Result<SqliteInbox> create(sqlite::Connection& db, WriterEntries entries = {});

  Result<std::vector<Appended>> append(std::span<const NewDelivery* const> batch) override;

  Result<std::vector<Appended>> append_with(std::span<const NewDelivery* const> batch,
                                            const AlsoInTransaction& also) override;
  int64_t last_seq() const override { return last_seq_; }
  uint64_t max_delivery_bytes() const override;
  Result<void> probe_write() override;

 private:
  SqliteInbox(sqlite::Connection& db, sqlite::Statement insert, sqlite::Statement find, WriterEntries entries,
              int64_t last_seq)
      : db_(&db),
        insert_(std::move(insert)),
        find_existing_(std::move(find)),
        entries_(std::move(entries)),
        last_seq_(last_seq) {}
  sqlite::Connection* db_;
  sqlite::Statement insert_;
  sqlite::Statement find_existing_;
  WriterEntries entries_;
  int64_t last_seq_;
};

std::string_view origin_name(Origin origin);

// SqliteInbox::max_delivery_bytes() before a store is opened (check-config): SQLite's length
// limit is the library's, the same on every connection that does not lower it (none does).
uint64_t sqlite_max_delivery_bytes();

}  // namespace hh::store
