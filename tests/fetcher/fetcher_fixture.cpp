#include "tests/fetcher/fetcher_fixture.h"

#include <future>
#include <stdexcept>
#include <thread>

#include "common/json_writer.h"
#include "common/timestamp.h"
#include "store/sqlite/database.h"

namespace hh::test {
namespace {

template <typename T>
T must(Result<T> result, const char* what) {
  if (!result) throw std::runtime_error(std::string(what) + ": " + result.error());
  return std::move(result.value());
}

// The processor's upsert (store/sqlite/derived/follow_up_jobs.cpp), so tests queue jobs exactly
// as production does.
constexpr std::string_view kQueueJob =
    "INSERT INTO jobs (kind, job_key, state, attempts, next_attempt_at, trigger_seq, payload, created_at, updated_at) "
    "VALUES (?1, ?2, 'queued', 0, ?3, ?4, ?5, ?3, ?3) "
    "ON CONFLICT (kind, job_key) DO UPDATE SET state = 'queued', attempts = 0, last_error = NULL, "
    "next_attempt_at = excluded.next_attempt_at, trigger_seq = excluded.trigger_seq, payload = excluded.payload, "
    "updated_at = excluded.updated_at WHERE excluded.trigger_seq > jobs.trigger_seq";

int64_t job_id_of(sqlite::Connection& db, std::string_view kind, std::string_view key) {
  auto stmt = must(db.prepare("SELECT job_id FROM jobs WHERE kind = ?1 AND job_key = ?2"), "prepare");
  stmt.bind(1, kind).bind(2, key);
  if (!must(stmt.step(), "step")) throw std::runtime_error("job not queued");
  return stmt.column_int(0);
}

}  // namespace

std::string backfill_key(const std::string& user_id, const std::string& resource, const std::string& provider,
                         const std::string& start, const std::string& end) {
  return user_id + "/" + resource + "/" + provider + "/" + std::to_string(*parse_iso8601_ms(start)) + "/" +
         std::to_string(*parse_iso8601_ms(end));
}

FetcherFixture::FetcherFixture() : database(dir.file("healthhook.db")) {
  write_db_.emplace(must(store::open_for_writing(database, store::StoreOptions{}), "open_for_writing"));
  inbox_.emplace(must(store::SqliteInbox::create(*write_db_), "inbox"));
  jobs_.emplace(must(store::JobStore::create(*write_db_), "job store"));
  writer_ = std::make_unique<store::InboxWriter>(*inbox_, store::WriterOptions{});
  writer_->start();
  read_db_.emplace(must(store::open_for_reading(database), "open_for_reading"));
}

FetcherFixture::~FetcherFixture() { writer_->stop(); }

config::ServiceSettings FetcherFixture::settings_for(const fake::FakeService& service) {
  config::ServiceSettings settings;
  settings.base_url = service.base_url();
  settings.api_key_header = "x-vital-api-key";
  if (!service.ca_pem().empty()) settings.ca_file = dir.write("service-ca.pem", service.ca_pem());
  settings.concurrency = 1;
  settings.connect_timeout_s = 5;
  settings.read_timeout_s = 5;
  settings.max_attempts = 5;
  settings.backoff_initial_s = 5;
  settings.backoff_max_s = 60;
  return settings;
}

std::unique_ptr<fetcher::Fetcher> FetcherFixture::make_fetcher(const config::ServiceSettings& settings,
                                                               const std::string& api_key,
                                                               std::chrono::milliseconds read_timeout) {
  fetcher::FetcherOptions options;
  options.database = database;
  options.service = settings;
  options.api_key = api_key;
  options.now_ms = [this] { return clock.load(); };
  options.read_timeout = read_timeout;
  options.max_page_bytes = max_page_bytes;
  options.max_pages = max_pages;
  return must(fetcher::Fetcher::create(std::move(options), *writer_, *inbox_, *jobs_), "fetcher");
}

void FetcherFixture::on_writer(const std::function<void(sqlite::Connection&)>& work) {
  std::promise<void> done;
  writer_->post([&] {
    work(*write_db_);
    done.set_value();
  });
  done.get_future().get();
}

int64_t FetcherFixture::queue_stream_job(const std::string& workout_id, int64_t trigger_seq) {
  std::string payload;
  json::ObjectWriter(payload)
      .string("workout_id", workout_id)
      .string("user_id", "u-1")
      .string("provider", "garmin")
      .close();
  int64_t job_id = 0;
  on_writer([&](sqlite::Connection& db) {
    auto stmt = must(db.prepare(kQueueJob), "prepare");
    stmt.bind(1, std::string_view("workout_stream")).bind(2, std::string_view(workout_id)).bind(3, clock.load())
        .bind(4, trigger_seq).bind(5, std::string_view(payload));
    if (auto ran = stmt.run(); !ran) throw std::runtime_error(ran.error());
    job_id = job_id_of(db, "workout_stream", workout_id);
  });
  return job_id;
}

int64_t FetcherFixture::queue_backfill_job(const std::string& user_id, const std::string& resource,
                                           const std::string& provider, const std::string& start,
                                           const std::string& end, int64_t trigger_seq) {
  std::string payload;
  json::ObjectWriter(payload)
      .string("user_id", user_id)
      .string("resource", resource)
      .string("provider", provider)
      .string("start", start)
      .string("end", end)
      .close();
  const std::string key = backfill_key(user_id, resource, provider, start, end);
  int64_t job_id = 0;
  on_writer([&](sqlite::Connection& db) {
    auto stmt = must(db.prepare(kQueueJob), "prepare");
    stmt.bind(1, std::string_view("backfill")).bind(2, std::string_view(key)).bind(3, clock.load())
        .bind(4, trigger_seq).bind(5, std::string_view(payload));
    if (auto ran = stmt.run(); !ran) throw std::runtime_error(ran.error());
    job_id = job_id_of(db, "backfill", key);
  });
  return job_id;
}

store::JobRow FetcherFixture::job(int64_t job_id) {
  auto row = must(store::find_job(*read_db_, job_id), "find_job");
  if (!row) throw std::runtime_error("no job " + std::to_string(job_id));
  return *row;
}

std::vector<FetchedRow> FetcherFixture::fetched_rows() {
  auto stmt = must(read_db_->prepare("SELECT seq, message_id, origin, event_type, headers, body, status "
                                     "FROM deliveries WHERE origin = 'fetch' ORDER BY seq"),
                   "prepare");
  std::vector<FetchedRow> rows;
  for (;;) {
    auto more = must(stmt.step(), "step");
    if (!more) break;
    FetchedRow row;
    row.seq = stmt.column_int(0);
    row.message_id = std::string(stmt.column_text(1));
    row.origin = std::string(stmt.column_text(2));
    row.event_type = std::string(stmt.column_text(3));
    row.headers = std::string(stmt.column_text(4));
    row.body = std::string(stmt.column_blob(5));
    row.status = std::string(stmt.column_text(6));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<fetcher::JobOutcome> FetcherFixture::run_until_settled(fetcher::Fetcher& fetcher, int64_t job_id,
                                                                   int max_rounds) {
  std::vector<fetcher::JobOutcome> seen;
  for (int round = 0; round < max_rounds; ++round) {
    for (auto& outcome : fetcher.run_due_now()) seen.push_back(std::move(outcome));
    const store::JobRow row = job(job_id);
    if (row.state == "done" || row.state == "dead") break;
    if (row.state == "queued") clock = std::max(clock.load(), row.next_attempt_at);
  }
  return seen;
}

}  // namespace hh::test
