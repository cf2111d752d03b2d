#include "forward/forwarder.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/asio_token.h"
#include "common/http_client/tls_context.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "forward/cpu_share.h"
#include "forward/destination_sender.h"
#include "forward/forward_rule.h"
#include "forward/outbox_budget.h"
#include "receiver/signature/webhook_signature.h"
#include "store/open_store.h"
#include "store/open_readers.h"

namespace hh::forward {
namespace {

namespace net = boost::asio;

constexpr std::chrono::seconds kOutboxCheckInterval{2};
// Between two steps of a drop that takes several (outbox_budget.h).
constexpr std::chrono::milliseconds kBudgetStepInterval{100};
// The forwarder's nice value: below the threads that acknowledge and apply deliveries.
constexpr int kForwarderNice = 19;

// Forwarding must never slow ingest (spec §10): on a machine whose cores ingest keeps busy,
// the forwarding thread gets the time left over (the outbox grows meanwhile and drains when
// the burst is over); on an idle one it runs at full speed. Linux gives each thread its own
// nice value (setpriority on the thread id). Failing is harmless: it only keeps the default.
void lower_this_threads_priority() {
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  if (::setpriority(PRIO_PROCESS, tid, kForwarderNice) != 0) {
    log::warn("forward_priority_unchanged").str("error", std::strerror(errno));
  }
}

}  // namespace

struct Forwarder::Parts {
  net::io_context io;
  std::unique_ptr<store::Outbox> outbox;
  std::unique_ptr<store::ReadStore> rows;
  std::vector<std::unique_ptr<DestinationSender>> senders;  // one per [[forward]] block, in order
  net::steady_timer check_timer{io};
  Clock now_ms;
  CpuShare cpu;
  std::atomic<int64_t> slept_ns{0};  // by `cpu`, so far: POST deadlines do not count it
  bool stopping = false;
};

uint64_t Forwarder::sockets_at_most(const config::Settings& settings) {
  uint64_t sockets = 0;
  for (const config::ForwardSettings& f : settings.forwards) {
    sockets += static_cast<uint64_t>(f.concurrency) + DestinationSender::kMaxBesideSlow;
  }
  return sockets;
}

Result<std::unique_ptr<Forwarder>> Forwarder::create(const config::Settings& settings,
                                                     const config::Secrets& secrets, Clock now_ms,
                                                     IngestProgress ingest) {
  auto parts = std::make_unique<Parts>();
  if (ingest) {
    parts->cpu.share = kShareWhileIngesting;
    parts->cpu.slept_ns = &parts->slept_ns;
    // Asked on the forwarder's thread only, after each slice.
    parts->cpu.limited = [ingest = std::move(ingest), seen = uint64_t{0},
                          grew_at = std::chrono::steady_clock::time_point{}, spare = SpareCores()]() mutable {
      const auto now = std::chrono::steady_clock::now();
      if (const uint64_t count = ingest(); count != seen) {
        seen = count;
        grew_at = now;
      }
      return now - grew_at < kIngestQuiet && spare.now() < kSpareCores;
    };
  }
  const store::Database database(settings.database, secrets.database_password);
  auto outbox = store::open_outbox(database, store::OutboxUse::sender);
  if (!outbox) return fail(outbox, "forwarding");
  parts->outbox = std::move(*outbox);
  auto rows = store::open_read_store(database);
  if (!rows) return fail(rows, "forwarding");
  parts->rows = std::move(*rows);
  parts->now_ms = now_ms;
  std::vector<std::unique_ptr<DestinationMetrics>> metrics;
  for (size_t i = 0; i < settings.forwards.size(); ++i) {
    const config::ForwardSettings& f = settings.forwards[i];
    const std::string where = "forward[" + std::to_string(i) + "]";
    auto url = parse_http_url(f.url);
    // Checked at load: a second look (that never prints the URL, which may hold a token).
    if (!url) return fail(ErrorKind::data, where + ".url: not an http(s) URL");
    if (auto key = signature::decode_secret(secrets.forward_secrets.at(i)); !key) {
      return fail(ErrorKind::data, where + ".secret_file: not a whsec_ secret (whsec_ and base64)");
    }
    std::shared_ptr<net::ssl::context> tls;
    if (url->tls) {
      const std::string ca_file =
          f.ca_file.empty() ? f.ca_file : config::resolve_secret_path(f.ca_file, settings.base_dir);
      auto context = http_client::client_tls_context(ca_file);
      if (!context) return fail(ErrorKind::data, where + ".ca_file: " + context.error());
      tls = std::move(*context);
    } else if (f.allow_plain_http) {
      log::warn("forward_plain_http").str("destination", f.name).str("host", url->host);
    }
    // Without the query: a backend may take a token there, and logs never hold a secret.
    log::info("forwarding")
        .str("destination", f.name)
        .str("url", url->without_query())
        .str("mode", f.mode)
        .num("batch", f.batch)
        .num("concurrency", f.concurrency);
    metrics.push_back(std::make_unique<DestinationMetrics>(f.name));
    parts->senders.push_back(std::make_unique<DestinationSender>(
        parts->io, DestinationConfig{f, secrets.forward_secrets.at(i), std::move(*url)}, std::move(tls),
        *parts->outbox, *parts->rows, *metrics.back(), now_ms, &parts->slept_ns));
  }
  std::unique_ptr<Forwarder> forwarder(new Forwarder(std::move(parts)));
  forwarder->metrics_ = std::move(metrics);
  return forwarder;
}

Forwarder::Forwarder(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Forwarder::~Forwarder() { stop(); }

double Forwarder::yielded_seconds() const {
  return static_cast<double>(parts_->slept_ns.load(std::memory_order_relaxed)) / 1e9;
}

void Forwarder::start() {
  if (started_) return;
  started_ = true;
  check_outbox();  // before any sender runs: a destination paused before a restart sends nothing
  for (auto& sender : parts_->senders) net::co_spawn(parts_->io, sender->run(), net::detached);
  net::co_spawn(
      parts_->io,
      [this]() -> net::awaitable<void> {
        while (!parts_->stopping) {
          const auto started = std::chrono::steady_clock::now();
          const bool over_budget = check_outbox();
          // Counting a large outbox (a backend gone for days) takes a while: the forwarder's
          // thread spends at most a twentieth of its time on it, but while a large drop goes
          // step by step, half.
          const auto took = std::chrono::steady_clock::now() - started;
          parts_->check_timer.expires_after(
              over_budget ? std::max<std::chrono::steady_clock::duration>(kBudgetStepInterval, took)
                          : std::max<std::chrono::steady_clock::duration>(kOutboxCheckInterval, took * 20));
          co_await parts_->check_timer.async_wait(use_tuple);
        }
      },
      net::detached);
  thread_ = start_named_thread("hh-forward", [this] {
    lower_this_threads_priority();
    run_within_share(parts_->io, parts_->cpu);
  });
}

void Forwarder::stop() {
  if (!started_) return;
  started_ = false;
  net::post(parts_->io, [this] {
    parts_->stopping = true;
    parts_->check_timer.cancel();
    for (auto& sender : parts_->senders) sender->stop();
  });
  // run() returns once every coroutine has seen the stop and ended.
  if (thread_.joinable()) thread_.join();
}

bool Forwarder::check_outbox() {
  auto figures = parts_->outbox->figures();
  if (!figures) {
    log::warn("forward_outbox_unreadable").str("error", figures.error());
    return false;
  }
  const int64_t now = parts_->now_ms();
  // Pauses (forward pause|resume, the console) take effect here, within kOutboxCheckInterval.
  auto paused = parts_->outbox->paused();
  if (!paused) log::warn("forward_outbox_unreadable").str("error", paused.error());
  bool over_budget = false;
  for (size_t i = 0; i < parts_->senders.size(); ++i) {
    const config::ForwardSettings& f = parts_->senders[i]->settings();
    DestinationMetrics& m = *metrics_[i];
    if (paused) {
      const bool is_paused = std::find(paused->begin(), paused->end(), f.name) != paused->end();
      parts_->senders[i]->set_paused(is_paused);
      m.paused.store(is_paused ? 1 : 0, std::memory_order_relaxed);
    }
    const store::OutboxFigures* mine = nullptr;
    for (const auto& row : *figures) {
      if (row.destination == f.name) mine = &row;
    }
    const store::OutboxFigures none;
    const store::OutboxFigures& figure = mine ? *mine : none;
    m.pending.store(figure.pending, std::memory_order_relaxed);
    m.dead_now.store(figure.dead, std::memory_order_relaxed);
    m.unmade.store(figure.unmade_deliveries, std::memory_order_relaxed);
    m.oldest_age_ms.store(figure.oldest_pending_created_at_ms ? now - *figure.oldest_pending_created_at_ms : 0,
                          std::memory_order_relaxed);
    auto step = keep_within_budget(*parts_->outbox, forward_rule(f), figure, f.max_outbox_mib * 1024 * 1024,
                                   parts_->senders[i]->busy_ids(), now);
    if (!step) {
      log::warn("forward_drop_failed").str("destination", f.name).str("error", step.error());
      continue;
    }
    over_budget = over_budget || step->more;
    if (step->ranges_merged > 0) {
      log::warn("forward_dropped_ranges_merged")
          .str("destination", f.name)
          .num("merged", step->ranges_merged)
          .num("max_outbox_mib", f.max_outbox_mib);
    }
    if (step->dropped.entries == 0) continue;
    m.dropped.fetch_add(static_cast<uint64_t>(step->dropped.entries), std::memory_order_relaxed);
    log::warn("forward_outbox_over_budget")
        .str("destination", f.name)
        .num("dropped", step->dropped.entries)
        .num("ranges", step->dropped.ranges)
        .num("max_outbox_mib", f.max_outbox_mib);
  }
  return over_budget;
}

}  // namespace hh::forward
