#pragma once
// What the fetcher tests share: a fresh database with the writer thread running (the
// fetcher writes only through it), a fake clock, jobs queued the way the processor
// queues them (store/sqlite/derived/follow_up_jobs.cpp), and readers for jobs and fetched rows.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/settings.h"
#include "fetcher/fetcher.h"
#include "store/inbox_writer.h"
#include "store/sqlite/jobs/sqlite_job_admin.h"
#include "store/sqlite/jobs/job_store.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/fake_service/fake_service.h"
#include "tests/support/examples.h"
#include "tests/support/database_probe.h"
#include "tests/support/temp_dir.h"

namespace hh::test {

inline constexpr int64_t kStartClockMs = 1'717'200'000'000;  // 2024-06-01T00:00:00Z
inline constexpr const char* kApiKey = "test-api-key";

struct FetchedRow {
  int64_t seq = 0;
  std::string message_id, origin, event_type, headers, body, status;
};

class FetcherFixture {
 public:
  FetcherFixture();
  ~FetcherFixture();

  // [service] settings for `service`: its base URL, our key header, its CA in a file,
  // backoff 5 s doubling to 60 s, 5 attempts, concurrency 1.
  config::ServiceSettings settings_for(const fake::FakeService& service);
  // A fetcher on this database with the fake clock; read deadline `read_timeout`.
  std::unique_ptr<fetcher::Fetcher> make_fetcher(const config::ServiceSettings& settings,
                                                 const std::string& api_key = kApiKey,
                                                 std::chrono::milliseconds read_timeout = std::chrono::seconds(5));

  // FetcherOptions::max_page_bytes of the fetchers made next (serve: the parser's limit).
  uint64_t max_page_bytes = 0;
  // FetcherOptions::max_pages of the fetchers made next (serve: 10,000).
  int64_t max_pages = fetcher::kMaxCursorPages;

  // Queued like the processor does, due now (the fake clock), on the writer thread.
  int64_t queue_stream_job(const std::string& workout_id, int64_t trigger_seq = 1);
  int64_t queue_backfill_job(const std::string& user_id, const std::string& resource, const std::string& provider,
                             const std::string& start, const std::string& end, int64_t trigger_seq = 1);
  // Runs `work` on the writer thread with the write connection and waits for it.
  void on_writer(const std::function<void(sqlite::Connection&)>& work);

  store::JobRow job(int64_t job_id);
  std::vector<FetchedRow> fetched_rows();

  // Runs the fetcher until `job_id` is done or dead, moving the clock to each retry's
  // next_attempt_at; at most `max_rounds` rounds. Returns every outcome seen.
  std::vector<fetcher::JobOutcome> run_until_settled(fetcher::Fetcher& fetcher, int64_t job_id, int max_rounds = 20);

  TempDir dir;
  std::string database;
  std::atomic<int64_t> clock{kStartClockMs};

 private:
  std::optional<sqlite::Connection> write_db_;
  std::optional<store::SqliteInbox> inbox_;
  std::optional<store::JobStore> jobs_;
  std::unique_ptr<store::InboxWriter> writer_;
  std::optional<sqlite::Connection> read_db_;
};

// The rows of the backfill job key the processor builds: "user/resource/provider/start_ms/end_ms".
std::string backfill_key(const std::string& user_id, const std::string& resource, const std::string& provider,
                         const std::string& start, const std::string& end);

}  // namespace hh::test
