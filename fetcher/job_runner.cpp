#include "fetcher/job_runner.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string>
#include <unordered_set>
#include <variant>

#include "common/json_scan.h"
#include "common/log.h"
#include "fetcher/calls/service_request.h"
#include "fetcher/failure_policy.h"
#include "fetcher/fetch_plan.h"

namespace hh::fetcher {
namespace {

namespace net = boost::asio;

void log_outcome(const store::ClaimedJob& job, const JobOutcome& outcome) {
  const bool bad = outcome.kind == JobOutcome::Kind::dead || outcome.kind == JobOutcome::Kind::stuck;
  const log::Level level = bad ? log::Level::error
                               : outcome.kind == JobOutcome::Kind::retry ? log::Level::warn : log::Level::info;
  log::Line line(level, "job_" + std::string(outcome_name(outcome.kind)));
  line.num("job_id", job.job_id).str("kind", job.kind).str("job_key", job.job_key);
  line.num("pages", outcome.pages).num("bytes", static_cast<int64_t>(outcome.body_bytes));
  line.num("attempts", outcome.attempts);
  if (outcome.kind == JobOutcome::Kind::retry) line.num("next_attempt_at", outcome.next_attempt_at_ms);
  if (!outcome.error.empty()) line.str("error", outcome.error);
}

}  // namespace

std::string_view outcome_name(JobOutcome::Kind kind) {
  switch (kind) {
    case JobOutcome::Kind::done: return "done";
    case JobOutcome::Kind::retry: return "retry";
    case JobOutcome::Kind::dead: return "dead";
    case JobOutcome::Kind::superseded: return "superseded";
    case JobOutcome::Kind::stopped: return "stopped";
    case JobOutcome::Kind::stuck: return "stuck";
  }
  return "unknown";
}

JobRunner::JobRunner(ServiceClients& clients, WriterLink& writer, ServicePauses& pauses, RunnerOptions options,
                     const std::atomic<bool>& stopping)
    : clients_(clients), writer_(writer), options_(std::move(options)), stopping_(stopping), pauses_(pauses),
      random_(std::random_device{}()) {}

// Coding rule for this file: a co_await expression holds no class-type temporaries; calls
// are made first (`auto op = f(…)`) and then awaited, because g++ 12 destroys such
// temporaries twice (GCC PR 100611).

net::awaitable<JobOutcome> JobRunner::fail_job(store::ClaimedJob& job, JobOutcome outcome, bool final,
                                               std::optional<int64_t> retry_after_s, std::string error,
                                               HttpsClient* paused_service) {
  const int64_t now = options_.now_ms();
  const store::RetryDecision decision =
      store::decide_retry(options_.retry, job.attempts, final, retry_after_s, now, random_());
  if (paused_service) {
    // The service asked every job to wait (429/503): until this job's own retry, or the
    // Retry-After when this job is dead, at most a day as every Retry-After (a lying one
    // held every other job back for a year, or overflowed). Never shortened by a later,
    // shorter answer.
    const int64_t asked_s = std::clamp<int64_t>(retry_after_s.value_or(0), 0, store::kMaxRetryAfterSeconds);
    const int64_t until = decision.dead ? now + asked_s * 1000 : decision.next_attempt_at_ms;
    pauses_.pause(*paused_service, until, error);
  }
  auto operation = record(job, std::move(outcome), decision, std::move(error), now);
  co_return co_await std::move(operation);
}

net::awaitable<JobOutcome> JobRunner::record(store::ClaimedJob& job, JobOutcome outcome,
                                             store::RetryDecision decision, std::string error, int64_t now) {
  auto operation = writer_.record_failure(job, decision, error, now);
  auto recorded = co_await std::move(operation);
  outcome.error = std::move(error);
  outcome.attempts = decision.attempts;
  if (!recorded) {
    outcome.kind = JobOutcome::Kind::stuck;
    outcome.error += "; recording the failure failed: " + recorded.error();
  } else if (!*recorded) {
    outcome.kind = JobOutcome::Kind::superseded;
  } else {
    outcome.kind = decision.dead ? JobOutcome::Kind::dead : JobOutcome::Kind::retry;
    outcome.next_attempt_at_ms = decision.next_attempt_at_ms;
  }
  log_outcome(job, outcome);
  co_return outcome;
}

net::awaitable<JobOutcome> JobRunner::hold_back(store::ClaimedJob& job, JobOutcome outcome, int64_t until_ms,
                                                std::string cause) {
  const int64_t now = options_.now_ms();
  store::RetryDecision decision;
  decision.attempts = job.attempts;
  decision.next_attempt_at_ms = now + store::retry_after_ms(until_ms - now, random_());
  std::string error = "held back while the service asks to wait, after " + cause;
  auto operation = record(job, std::move(outcome), decision, std::move(error), now);
  co_return co_await std::move(operation);
}

net::awaitable<JobOutcome> JobRunner::release(store::ClaimedJob& job, JobOutcome outcome) {
  auto operation = writer_.release(job, options_.now_ms());
  auto released = co_await std::move(operation);
  outcome.kind = released ? JobOutcome::Kind::stopped : JobOutcome::Kind::stuck;
  if (!released) outcome.error = "releasing the job failed: " + released.error();
  outcome.attempts = job.attempts;
  log_outcome(job, outcome);
  co_return outcome;
}

net::awaitable<void> JobRunner::keep_lease(store::ClaimedJob job) {
  net::steady_timer timer(co_await net::this_coro::executor);
  for (;;) {
    timer.expires_after(options_.lease_renewal);
    auto [waited] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    if (waited) co_return;  // cancelled: the fetch has answered
    auto operation = writer_.renew_lease(job, options_.now_ms());
    auto renewed = co_await std::move(operation);
    if (!renewed) {
      // Tried again at the next renewal; the lease runs out only after three failures.
      log::warn("job_lease_not_renewed").num("job_id", job.job_id).str("error", renewed.error());
    } else if (!*renewed) {
      // Re-triggered or taken over meanwhile: nothing to renew; the fetch goes on and its
      // page is refused as superseded. Wait to be cancelled.
      timer.expires_at(std::chrono::steady_clock::time_point::max());
      auto [cancelled] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
      (void)cancelled;
      co_return;
    }
  }
}

net::awaitable<FetchResult> JobRunner::fetch_holding_lease(HttpsClient& client, std::string target,
                                                           const store::ClaimedJob& job) {
  auto get = client.get(std::move(target));
  if (options_.lease_renewal.count() <= 0) co_return co_await std::move(get);
  using namespace boost::asio::experimental::awaitable_operators;
  // The first to end cancels the other, and keep_lease ends only when cancelled: this is the
  // fetch's result, with the lease renewed for as long as it took.
  auto race = std::move(get) || keep_lease(job);
  auto ended = co_await std::move(race);
  co_return std::get<0>(std::move(ended));
}

// g++ 12 reports Asio's coroutine-frame allocator (aligned_alloc, freed by the frame's
// own operator delete, boost/asio/detail/memory.hpp) as a mismatch once it inlines the
// ramp of this large coroutine: a false positive, silenced for this function only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
net::awaitable<JobOutcome> JobRunner::run(store::ClaimedJob job) {
  JobOutcome outcome;
  outcome.job_id = job.job_id;
  // What ends this run unless a page completes the job.
  bool stop = false;
  bool final = false;
  std::optional<int64_t> retry_after_s;
  std::string error;
  HttpsClient* paused_service = nullptr;  // the answer was a 429 or 503: pause every job to it
  HttpsClient& client = clients_.for_team(job.team_id);
  // Every cursor of this run: one that comes back means the service's pages loop (A, B,
  // A, …). Retrying cannot mend that, and every lap would store its pages again.
  std::unordered_set<std::string> cursors;
  if (job.cursor) cursors.insert(*job.cursor);
  for (;;) {
    if (stopping_.load()) {
      stop = true;
      break;
    }
    if (const ServicePause* pause = pauses_.active(client, options_.now_ms())) {
      auto operation = hold_back(job, outcome, pause->until_ms, pause->cause);
      co_return co_await std::move(operation);
    }
    auto plan = plan_next_page(job, client.base());
    if (!plan) {
      final = true;
      error = plan.error();
      break;
    }
    // The guard against a service whose next_cursor never ends counts the pages of a chain
    // of cursors, so only a page that follows one is held to it. A timeseries backfill's
    // chain runs from its window's first page: its page number is the chain's length. A
    // summary backfill follows no cursor: its pages are the fetcher's own 30-day steps of
    // the window (fetch_plan.h), each a stored position, walked whole however many there
    // are (a window since 1000-01-01 is some 12,500: it died at 10,000 with this message,
    // the service having sent no cursor, and the newest two centuries were never fetched).
    if (job.cursor && plan->page >= options_.max_pages) {
      final = true;
      error = endless_pages_error(options_.max_pages, "next_cursor") + " (" + plan->url + ")";
      break;
    }

    const auto started = std::chrono::steady_clock::now();
    auto get = fetch_holding_lease(client, plan->target, job);
    FetchResult response = co_await std::move(get);
    if (options_.observe_request) {
      options_.observe_request(request_outcome(response),
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    if (response.failure == FetchFailure::cancelled) {
      stop = true;
      break;
    }
    if (response.failure != FetchFailure::none) {
      FailureVerdict verdict = judge_failure(response);
      final = verdict.final;
      error = std::move(verdict.error) + " (" + plan->url + ")";
      break;
    }
    if (response.status / 100 != 2) {
      FailureVerdict verdict = judge_status(response, options_.now_ms() / 1000, job.kind == store::kKindParsingJob,
                                            clients_.base_url_setting(job.team_id));
      final = verdict.final;
      retry_after_s = verdict.retry_after_s;
      if (response.status == 429 || response.status == 503) paused_service = &client;
      error = std::move(verdict.error) + " (" + plan->url + ")";
      break;
    }
    // A page or job answer is applied as one JSON document (a workout stream is read
    // point by point): one past the parser's limit would be stored only to end `invalid`,
    // the job `done` without its rows. It ends the job dead, naming the limit.
    if (const uint64_t limit = options_.max_page_bytes;
        limit > 0 && job.kind != store::kKindWorkoutStream && response.body.size() > limit) {
      final = true;
      error = over_document_limit(response.body.size(), limit) + " (" + plan->url + ")";
      break;
    }
    if (auto valid = json::check_json(response.body); !valid) {
      error = valid.error() + " (" + plan->url + ")";
      break;
    }
    auto progress = progress_after(job, *plan, response.body);
    if (!progress) {
      error = progress.error() + " (" + plan->url + ")";
      break;
    }
    // The page is stored (its samples are the service's), then the job ends below.
    const bool looped = progress->cursor && !cursors.insert(*progress->cursor).second;

    const uint64_t body_bytes = response.body.size();
    auto page = std::make_shared<store::NewDelivery>();
    page->message_id = std::move(plan->message_id);
    page->origin = store::Origin::fetch;
    page->received_at_ms = options_.now_ms();
    page->event_type = std::move(plan->event_type);
    page->headers_json = std::move(plan->context_json);
    page->body = std::move(response.body);  // the only copy of the body; freed once stored
    const std::shared_ptr<const store::NewDelivery> stored_page = std::move(page);
    auto store = writer_.store_page(job, stored_page, *progress, options_.now_ms());
    auto stored = co_await std::move(store);
    if (!stored) {
      // The database refused (disk full, locked): the fetch was fine; retry it later.
      error = "storing the page: " + stored.error();
      break;
    }
    if (stored->superseded) {
      outcome.kind = JobOutcome::Kind::superseded;
      log_outcome(job, outcome);
      co_return outcome;
    }
    ++outcome.pages;
    outcome.body_bytes += body_bytes;
    job.page = progress->page;
    job.cursor = progress->cursor;
    job.next_start_ms = progress->next_start_ms;
    job.attempts = 0;
    if (progress->complete) {
      outcome.kind = JobOutcome::Kind::done;
      outcome.attempts = 0;
      log_outcome(job, outcome);
      co_return outcome;
    }
    if (looped) {
      final = true;
      error = "next_cursor \"" + *job.cursor + "\" came back: the service's pages loop (" + plan->url + ")";
      break;
    }
  }
  if (stop) {
    auto operation = release(job, outcome);
    co_return co_await std::move(operation);
  }
  auto operation = fail_job(job, outcome, final, retry_after_s, error, paused_service);
  co_return co_await std::move(operation);
}
#pragma GCC diagnostic pop

}  // namespace hh::fetcher
