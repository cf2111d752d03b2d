#pragma once
// One store of a given backend, opened as `serve` opens it (store::open_store), for suites
// of any area that check a behaviour of the store once and run it on both backends: a
// data-driven Boost.Test case over kBothBackends gets a BackendStore of each. What the
// suite asks goes through the store's interfaces (inbox, processing, job queue, job
// admin); what it checks is read with SQL both engines read alike (neutral spelling,
// store/schema/dialect.h). The PostgreSQL store is a fresh database on the test process's
// server (tests/support/postgres_cluster.h).
#include <boost/test/unit_test.hpp>

#include <array>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "processor/processor.h"
#include "store/open_store.h"
#include "store/postgres/database.h"
#include "store/schema/dialect.h"
#include "store/sqlite/database.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_must.h"
#include "tests/support/text_rows.h"

namespace hh::test {

enum class Backend { sqlite, postgres };
inline constexpr std::array kBothBackends{Backend::sqlite, Backend::postgres};

inline std::ostream& operator<<(std::ostream& out, Backend backend) {
  return out << (backend == Backend::sqlite ? "sqlite" : "postgresql");
}

class BackendStore {
 public:
  explicit BackendStore(Backend backend)
      : backend_(backend),
        location_(backend == Backend::sqlite ? dir_.file("healthhook.db")
                                             : PostgresCluster::shared().fresh_database()) {
    reopen();
    connect_checks();
  }

  Backend backend() const { return backend_; }
  store::Store& store() { return *store_; }
  // The SQLite file or the PostgreSQL URI, as `database = …` names it.
  const std::string& location() const { return location_; }

  // Another store on the same database, as a second process opens it.
  std::unique_ptr<store::Store> another_store() const {
    return twin_must(store::open_store(store::Database(location_), store::StoreOptions{}));
  }

  // The job administration (`healthhook jobs`) of this store, on a connection of its own.
  std::unique_ptr<store::JobAdmin> job_admin() const {
    return twin_must(store::open_job_admin(store::Database(location_)));
  }

  // The store closed and opened again, as after a restart of `serve`.
  void reopen() {
    store_.reset();
    store_ = twin_must(store::open_store(store::Database(location_), store::StoreOptions{}));
  }

  // Deliveries appended as the receiver appends them (group commits of at most 64).
  void append(const std::vector<store::NewDelivery>& deliveries) {
    auto inbox = twin_must(store_->open_inbox());
    for (size_t at = 0; at < deliveries.size(); at += 64) {
      std::vector<const store::NewDelivery*> batch;
      for (size_t i = at; i < deliveries.size() && i < at + 64; ++i) batch.push_back(&deliveries[i]);
      twin_must(inbox->append(batch));
    }
  }

  // A processor on this store (it holds the processing lock until it is gone).
  std::unique_ptr<processor::Processor> processor(processor::ProcessorOptions options = {}) {
    auto processing = twin_must(store_->open_processing());
    return twin_must(processor::Processor::create(std::move(processing), options));
  }

  // A reader of the inbox on a connection of its own, as a processor's parse thread gets
  // one (ProcessingStore::open_reader).
  std::unique_ptr<store::DeliveryCursor> reader(store::ReaderUse use) {
    auto processing = twin_must(store_->open_processing());
    return twin_must(processing->open_reader(use));
  }

  // The rows of `neutral_sql` (its first `columns` columns; 0: all of them), "|" between
  // values, NULL as "NULL".
  std::vector<std::string> rows(const std::string& neutral_sql, int columns = 0) {
    if (backend_ == Backend::sqlite) {
      return text_rows(*lite_, store::schema::spell(neutral_sql, store::schema::Dialect::sqlite), columns);
    }
    return text_rows(*pg_, store::schema::spell(neutral_sql, store::schema::Dialect::postgres), columns);
  }

  // The one value of `neutral_sql` ("" when it has no row).
  std::string value(const std::string& neutral_sql) {
    const auto found = rows(neutral_sql, 1);
    return found.empty() ? std::string() : found.front();
  }

  void exec(const std::string& neutral_sql) {
    if (backend_ == Backend::sqlite) {
      twin_must(lite_->exec(store::schema::spell(neutral_sql, store::schema::Dialect::sqlite)));
    } else {
      auto done = pg_->exec(store::schema::spell(neutral_sql, store::schema::Dialect::postgres));
      BOOST_REQUIRE_MESSAGE(done.ok(), done.error() + ": " + neutral_sql);
    }
  }

  // `neutral_sql` run in a transaction that never commits: the connection is closed
  // inside it, as when a process dies mid-step.
  void abandon(const std::string& neutral_sql) {
    exec("BEGIN; " + neutral_sql);
    lite_.reset();
    pg_.reset();
    connect_checks();
  }

 private:
  void connect_checks() {
    if (backend_ == Backend::sqlite) {
      lite_ = std::make_unique<sqlite::Connection>(twin_must(store::open_for_writing(location_, {})));
    } else {
      pg_ = std::make_unique<pg::Connection>(twin_must(store::connect_migrated({location_, ""})));
    }
  }

  Backend backend_;
  TempDir dir_;
  std::string location_;  // the SQLite file or the PostgreSQL URI
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<sqlite::Connection> lite_;  // for the checks: one of the two
  std::unique_ptr<pg::Connection> pg_;
};

}  // namespace hh::test
