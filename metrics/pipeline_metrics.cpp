#include "metrics/pipeline_metrics.h"

#include <algorithm>

namespace hh::metrics {
metrics::MetricsEndpoint::Collector processor_metrics(std::vector<const processor::Processor*> processors) {
  return [processors = std::move(processors)](metrics::PrometheusText& out) {
    using Stats = processor::Processor::Stats;
    const auto total = [&](const std::atomic<uint64_t> Stats::*counter) {
      uint64_t sum = 0;
      for (const auto* p : processors) sum += read_counter(p->stats().*counter);
      return sum;
    };
    const auto largest = [&](const std::atomic<int64_t> Stats::*gauge) {
      int64_t most = 0;
      for (const auto* p : processors) most = std::max(most, (p->stats().*gauge).load(std::memory_order_relaxed));
      return most;
    };
    constexpr std::string_view processed = "healthhook_processed_deliveries_total";
    out.family(processed, "counter", "Inbox rows applied by the processor since start, by the status they got")
        .sample(processed, {{"status", "processed"}}, total(&Stats::processed))
        .sample(processed, {{"status", "invalid"}}, total(&Stats::invalid))
        .sample(processed, {{"status", "ignored"}}, total(&Stats::ignored))
        .sample(processed, {{"status", "unknown"}}, total(&Stats::unknown));
    out.counter("healthhook_processor_rows_applied_total", "Derived rows inserted or replaced (samples included)",
                total(&Stats::rows_applied));
    out.counter("healthhook_processor_samples_applied_total", "Timeseries samples inserted or replaced",
                total(&Stats::samples_applied));
    out.counter("healthhook_processor_jobs_queued_total", "Follow-up fetch jobs queued or re-queued",
                total(&Stats::jobs_queued));
    constexpr std::string_view steps = "healthhook_processor_steps_total";
    out.family(steps, "counter", "Processor transactions: committed, or rolled back by a store failure")
        .sample(steps, {{"result", "ok"}}, total(&Stats::steps))
        .sample(steps, {{"result", "failed"}}, total(&Stats::step_failures));
    out.counter("healthhook_processor_parse_ahead_total",
                "Times live processing started a parse thread for a backlog no delivery was adding to",
                total(&Stats::parse_ahead_starts));
    out.gauge("healthhook_processor_leading",
              "1 while this instance applies the inbox (on PostgreSQL: the deliveries of its share of users); "
              "0 while others sharing the store apply all of it",
              static_cast<double>(largest(&Stats::leading)));
    // -1 on SQLite (no shards); on PostgreSQL the shards of all this instance's sessions.
    int64_t shards = -1;
    for (const auto* p : processors) {
      if (const int64_t held = p->stats().shards.load(std::memory_order_relaxed); held >= 0) {
        shards = std::max<int64_t>(shards, 0) + held;
      }
    }
    if (shards >= 0) {
      out.gauge("healthhook_processor_shards",
                "PostgreSQL: how many of the 16 shards of users this instance applies (the instances "
                "sharing the store hold them all between them)",
                static_cast<double>(shards));
    }
    out.gauge("healthhook_rebuild_unfinished",
              "1 while the derived tables are incomplete after a rebuild that did not finish and serve applies "
              "the inbox again (/readyz not ready, the read API answers 503); else 0",
              largest(&Stats::rebuild_through) > 0 ? 1.0 : 0.0);
    out.gauge("healthhook_processor_last_step_seconds",
              "Duration of the last committed processor transaction (with several processing sessions: the "
              "longest of their last ones)",
              static_cast<double>(largest(&Stats::last_step_micros)) / 1e6);
  };
}

metrics::MetricsEndpoint::Collector fetcher_metrics(const fetcher::Fetcher& fetcher, const metrics::FetchMetrics& requests) {
  return [&fetcher, &requests](metrics::PrometheusText& out) {
    constexpr std::string_view total = "healthhook_fetch_requests_total";
    out.family(total, "counter", "GET requests to the service by outcome (2xx ok, HTTP status class, or failure)");
    for (size_t i = 0; i < metrics::kFetchOutcomes.size(); ++i) {
      out.sample(total, {{"outcome", metrics::kFetchOutcomes[i]}}, read_counter(requests.requests[i]));
    }
    out.histogram("healthhook_fetch_request_seconds", "Time of one GET to the service, connect to last body byte",
                  requests.request_seconds.snapshot());
    const auto& s = fetcher.stats();
    constexpr std::string_view jobs = "healthhook_fetch_jobs_total";
    out.family(jobs, "counter", "Follow-up job attempts finished: done, to be retried, or dead (gave up)")
        .sample(jobs, {{"result", "done"}}, read_counter(s.jobs_done))
        .sample(jobs, {{"result", "retried"}}, read_counter(s.jobs_retried))
        .sample(jobs, {{"result", "dead"}}, read_counter(s.jobs_dead));
    out.counter("healthhook_fetch_pages_stored_total", "Fetched response pages stored in the inbox",
                read_counter(s.pages_stored));
    out.counter("healthhook_fetch_bytes_stored_total", "Bytes of fetched responses stored in the inbox",
                read_counter(s.bytes_stored));
  };
}

metrics::MetricsEndpoint::Collector forward_metrics(const forward::Forwarder& forwarder) {
  return [&forwarder](metrics::PrometheusText& out) {
    const auto& all = forwarder.metrics();
    auto per_destination = [&](std::string_view name, std::string_view type, std::string_view help, auto value) {
      out.family(name, type, help);
      for (const auto& m : all) out.sample(name, {{"destination", m->destination}}, value(*m));
    };
    per_destination("healthhook_forward_messages_sent_total", "counter",
                    "Forwarded messages (changes or deliveries) the destination answered with 2xx",
                    [](const forward::DestinationMetrics& m) { return read_counter(m.sent); });
    per_destination("healthhook_forward_messages_dead_total", "counter",
                    "Forwarded messages given up (a final answer, max_attempts or max_age): forward requeue sends them again",
                    [](const forward::DestinationMetrics& m) { return read_counter(m.dead); });
    per_destination("healthhook_forward_messages_dropped_total", "counter",
                    "Outbox entries dropped because the outbox passed max_outbox_mib",
                    [](const forward::DestinationMetrics& m) { return read_counter(m.dropped); });
    constexpr std::string_view requests = "healthhook_forward_requests_total";
    out.family(requests, "counter", "POSTs to the destination by outcome (ok, HTTP status class, or failure)");
    for (const auto& m : all) {
      for (size_t i = 0; i < forward::kRequestOutcomes.size(); ++i) {
        out.sample(requests, {{"destination", m->destination}, {"outcome", forward::kRequestOutcomes[i]}},
                   read_counter(m->requests[i]));
      }
    }
    per_destination("healthhook_forward_outbox_pending", "gauge", "Outbox entries waiting to be forwarded",
                    [](const forward::DestinationMetrics& m) { return m.pending.load(std::memory_order_relaxed); });
    per_destination("healthhook_forward_unmade_deliveries", "gauge",
                    "Deliveries whose entries wait in the change feed or the inbox for the sender to make them (it "
                    "took the making over from the writer while behind; 0: the writer makes them); by seq, so "
                    "deliveries the destination's events leave out count too",
                    [](const forward::DestinationMetrics& m) { return m.unmade.load(std::memory_order_relaxed); });
    per_destination("healthhook_forward_outbox_dead", "gauge", "Dead outbox entries kept for forward requeue",
                    [](const forward::DestinationMetrics& m) { return m.dead_now.load(std::memory_order_relaxed); });
    per_destination("healthhook_forward_outbox_oldest_seconds", "gauge",
                    "Age of the oldest outbox entry waiting to be forwarded (0: none)",
                    [](const forward::DestinationMetrics& m) {
                      return static_cast<double>(m.oldest_age_ms.load(std::memory_order_relaxed)) / 1000.0;
                    });
    constexpr std::string_view yielded = "healthhook_forward_yielded_seconds_total";
    out.family(yielded, "counter",
               "Seconds the forwarding thread slept to leave the CPU to ingest (at most 15 % of a core while "
               "deliveries are stored and no core is spare; what waits meanwhile stays in the outbox)")
        .sample(yielded, {}, forwarder.yielded_seconds());
    per_destination("healthhook_forward_paused", "gauge",
                    "1 while an operator has paused the destination (forward pause, the console): nothing is sent",
                    [](const forward::DestinationMetrics& m) { return m.paused.load(std::memory_order_relaxed); });
  };
}

metrics::MetricsEndpoint::Collector checkpointer_metrics(const store::Checkpointer& checkpointer) {
  return [&checkpointer](metrics::PrometheusText& out) {
    out.counter("healthhook_wal_checkpoints_total",
                "Checkpoints that copied the whole write-ahead log into the database (the WAL starts over after each)",
                checkpointer.rewinds());
    out.counter("healthhook_wal_database_syncs_total", "Syncs of the database file after the checkpoint thread's copies",
                checkpointer.database_syncs());
    // Deliveries stay safe (the WAL keeps every change and is synced before each 2xx), so
    // /readyz stays 200; what grows is the -wal file (healthhook_database_wal_bytes).
    out.gauge("healthhook_wal_checkpoints_stopped",
              "1 after a sync of the database file failed: no checkpoint runs and the WAL grows until a restart",
              int64_t{checkpointer.stopped_by_failure() ? 1 : 0});
  };
}

metrics::MetricsEndpoint::Collector retention_metrics(const processor::BodyRetentionWork& retention) {
  return [&retention](metrics::PrometheusText& out) {
    const auto& s = retention.stats();
    out.counter("healthhook_bodies_removed_total",
                "Delivery bodies removed by [retention] body_days since start (the inbox rows stay)",
                read_counter(s.bodies_removed));
    out.counter("healthhook_body_bytes_removed_total", "Bytes of those bodies", read_counter(s.bytes_removed));
  };
}

}  // namespace hh::metrics
