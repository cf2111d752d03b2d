#include "fetcher/fetcher.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/asio_token.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "config/load_settings.h"
#include "config/secrets.h"
#include "fetcher/providers_sync.h"
#include "store/open_readers.h"
#include "common/timestamp.h"

namespace hh::fetcher {
namespace {

namespace net = boost::asio;

// Logs what escaped a coroutine (only bugs and bad_alloc throw here).
void log_exception(std::exception_ptr error) {
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    log::error("fetcher_exception").str("what", e.what());
  }
}

}  // namespace

ClientOptions client_options(const FetcherOptions& options) {
  const auto& service = options.service;
  ClientOptions client;
  client.connect_timeout = options.connect_timeout.value_or(std::chrono::seconds(service.connect_timeout_s));
  client.read_timeout = options.read_timeout.value_or(std::chrono::seconds(service.read_timeout_s));
  client.fetch_timeout = options.fetch_timeout.value_or(std::chrono::seconds(service.fetch_timeout_s));
  client.max_response_bytes = static_cast<uint64_t>(service.max_response_bytes);
  client.api_key_header = service.api_key_header;
  client.api_key = options.api_key;
  if (!service.ca_file.empty()) client.ca_file = config::resolve_config_path(service.ca_file, options.base_dir);
  client.max_idle_connections = static_cast<size_t>(std::max<int64_t>(1, service.concurrency));
  return client;
}

store::RetryPolicy retry_policy(const config::ServiceSettings& service) {
  store::RetryPolicy policy;
  policy.max_attempts = service.max_attempts;
  policy.initial = std::chrono::seconds(service.backoff_initial_s);
  policy.max = std::chrono::seconds(service.backoff_max_s);
  return policy;
}

struct Fetcher::Impl {
  Impl(FetcherOptions opts, store::InboxWriter& writer, store::Inbox& inbox, store::JobQueue& jobs, Stats& s)
      : options(std::move(opts)), link(writer, inbox, jobs), stats(s) {}

  // Declared first: destroyed last, after everything holding its executor.
  net::io_context io{1};
  FetcherOptions options;
  WriterLink link;
  Stats& stats;
  std::unique_ptr<ServiceClients> clients;
  ServicePauses pauses;  // shared by the jobs and the provider list
  std::unique_ptr<JobRunner> runner;
  std::unique_ptr<ProvidersSync> providers;
  std::unique_ptr<store::FollowUpReads> reads;  // used only on the io thread
  std::atomic<bool> stopping{false};
  net::steady_timer poll_timer{io};
  net::steady_timer idle_signal{io};               // cancelled when the last job in flight ends
  bool wake_pending = false;                       // io thread only
  bool recovered = false;
  std::vector<int64_t> in_flight;                  // job ids, io thread only
  std::vector<JobOutcome>* collect = nullptr;      // run_due_now
  std::thread thread;

  size_t concurrency() const { return static_cast<size_t>(std::max<int64_t>(1, options.service.concurrency)); }

  void wake_local() {
    wake_pending = true;
    poll_timer.cancel();
  }

  net::awaitable<void> recover() {
    recovered = true;
    auto operation = link.requeue_interrupted(options.now_ms(), options.service.max_attempts);
    auto requeued = co_await std::move(operation);
    if (!requeued) {
      log::error("jobs_requeue_failed").str("error", requeued.error());
    } else if (*requeued > 0) {
      log::info("jobs_requeued").num("count", *requeued).str("reason", "left running by an earlier run");
    }
  }

  // The earliest next_attempt_at of a queued job, from the read connection.
  std::optional<int64_t> next_due_at() {
    auto due = reads->next_due_at();
    if (!due) {
      log::warn("jobs_poll_failed").str("error", due.error());
      return std::nullopt;
    }
    return *due;
  }

  // Claims what is due into free slots and starts it; returns how long to sleep.
  net::awaitable<std::chrono::milliseconds> claim_and_start() {
    const auto idle_wait = options.poll_interval;
    if (in_flight.size() >= concurrency()) co_return idle_wait;
    const int64_t now = options.now_ms();
    const auto due = next_due_at();
    if (!due) co_return idle_wait;
    if (*due > now) co_return std::min(idle_wait, std::chrono::milliseconds(*due - now));
    auto operation = link.claim_due(now, concurrency() - in_flight.size(), in_flight);
    auto claimed = co_await std::move(operation);
    if (!claimed) {
      log::error("jobs_claim_failed").str("error", claimed.error());
      co_return idle_wait;
    }
    for (store::ClaimedJob& job : *claimed) {
      in_flight.push_back(job.job_id);
      net::co_spawn(io, run_one(std::move(job)), log_exception);
    }
    co_return idle_wait;
  }

  net::awaitable<void> run_one(store::ClaimedJob job) {
    const int64_t job_id = job.job_id;
    auto operation = runner->run(std::move(job));
    JobOutcome outcome = co_await std::move(operation);
    std::erase(in_flight, job_id);
    stats.pages_stored.fetch_add(static_cast<uint64_t>(outcome.pages));
    stats.bytes_stored.fetch_add(outcome.body_bytes);
    if (outcome.kind == JobOutcome::Kind::done) stats.jobs_done.fetch_add(1);
    if (outcome.kind == JobOutcome::Kind::retry) stats.jobs_retried.fetch_add(1);
    if (outcome.kind == JobOutcome::Kind::dead) stats.jobs_dead.fetch_add(1);
    if (collect) collect->push_back(std::move(outcome));
    if (in_flight.empty()) idle_signal.cancel();
    wake_local();  // a slot is free
  }

  net::awaitable<void> wait_idle() {
    while (!in_flight.empty()) {
      idle_signal.expires_at(net::steady_timer::time_point::max());
      co_await idle_signal.async_wait(use_tuple);
    }
  }

  net::awaitable<void> poll_loop() {
    co_await recover();
    while (!stopping.load()) {
      const auto wait = co_await claim_and_start();
      if (stopping.load()) break;
      if (wake_pending) {
        wake_pending = false;
        continue;
      }
      poll_timer.expires_after(wait);
      co_await poll_timer.async_wait(use_tuple);
      wake_pending = false;
    }
    // Drain: jobs in flight may finish until the deadline; then their connections close
    // and they release themselves.
    net::steady_timer deadline(io);
    deadline.expires_after(options.drain_timeout);
    deadline.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) clients->close_all();
    });
    co_await wait_idle();
    deadline.cancel();
    clients->close_all();  // idle keep-alive connections
  }
};

Fetcher::Fetcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<Fetcher>> Fetcher::create(FetcherOptions options, store::InboxWriter& writer,
                                                 store::Inbox& inbox, store::JobQueue& jobs) {
  auto base = BaseUrl::parse(options.service.base_url);
  if (!base) return fail(base);
  if (auto key = check_api_key(options.api_key, "service.api_key_file"); !key) return fail(key);
  const auto& header = options.service.api_key_header;
  if (!config::is_header_name(header)) return fail("service.api_key_header: not a header name: \"" + header + "\"");
  if (!options.now_ms) options.now_ms = unix_now_ms;
  const store::Database database = options.database;
  std::unique_ptr<Fetcher> fetcher(new Fetcher(nullptr));
  fetcher->impl_ = std::make_unique<Impl>(std::move(options), writer, inbox, jobs, fetcher->stats_);
  Impl& impl = *fetcher->impl_;
  auto clients =
      ServiceClients::create(impl.io.get_executor(), std::move(*base), client_options(impl.options), impl.options.teams);
  if (!clients) return fail(clients);
  impl.clients = std::move(*clients);
  auto reads = store::open_follow_up_reads(database);
  if (!reads) return fail(reads, "fetcher");
  impl.reads = std::move(*reads);
  RunnerOptions runner{retry_policy(impl.options.service), impl.options.now_ms, impl.options.observe_request};
  runner.max_page_bytes = impl.options.max_page_bytes;
  runner.max_pages = impl.options.max_pages;
  // Three renewals per lease: two may fail (the store busy a moment) before it runs out.
  if (const auto lease = jobs.lease()) runner.lease_renewal = std::max(*lease / 3, std::chrono::milliseconds(1));
  impl.runner = std::make_unique<JobRunner>(*impl.clients, impl.link, impl.pauses, std::move(runner), impl.stopping);
  ProvidersSyncOptions sync;
  sync.retry_initial = std::chrono::seconds(std::max<int64_t>(1, impl.options.service.backoff_initial_s));
  sync.retry_max = std::max(sync.retry_initial, std::chrono::milliseconds(std::chrono::seconds(impl.options.service.backoff_max_s)));
  sync.now_ms = impl.options.now_ms;
  sync.observe_request = impl.options.observe_request;
  sync.newest_stored = [&impl] { return impl.reads->newest_body_with_id_prefix(kProvidersMessagePrefix); };
  impl.providers = std::make_unique<ProvidersSync>(impl.clients->primary(), impl.link, impl.pauses, std::move(sync));
  return fetcher;
}

Fetcher::~Fetcher() { stop(); }

void Fetcher::start() {
  if (impl_->thread.joinable()) return;
  impl_->io.restart();
  net::co_spawn(impl_->io, impl_->poll_loop(), log_exception);
  net::co_spawn(impl_->io, impl_->providers->run(impl_->stopping), log_exception);
  impl_->thread = start_named_thread("hh-fetch", [impl = impl_.get()] { impl->io.run(); });
  log::info("fetcher_started")
      .str("base_url", impl_->clients->primary().base().full_url(""))
      .num("teams", static_cast<int64_t>(impl_->options.teams.size()))
      .num("concurrency", static_cast<int64_t>(impl_->concurrency()));
}

void Fetcher::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->stopping.store(true);
  net::post(impl_->io, [impl = impl_.get()] {
    impl->poll_timer.cancel();
    impl->providers->cancel_wait();
  });
  impl_->thread.join();
  log::info("fetcher_stopped");
}

void Fetcher::wake() {
  net::post(impl_->io, [impl = impl_.get()] { impl->wake_local(); });
}

std::vector<JobOutcome> Fetcher::run_due_now() {
  std::vector<JobOutcome> outcomes;
  Impl& impl = *impl_;
  impl.collect = &outcomes;
  impl.io.restart();
  net::co_spawn(
      impl.io,
      [&impl]() -> net::awaitable<void> {
        if (!impl.recovered) co_await impl.recover();
        co_await impl.claim_and_start();
        co_await impl.wait_idle();
      },
      log_exception);
  impl.io.run();
  impl.collect = nullptr;
  impl.wake_pending = false;
  return outcomes;
}

uint64_t Fetcher::connections_opened() const { return impl_->clients->connections_opened(); }

}  // namespace hh::fetcher
