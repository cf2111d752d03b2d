// healthhook rebuild: re-derives every derived table from the inbox (spec §1, §6).
//
// Empties the derived tables, then applies the inbox in seq order with the same processor
// `serve` runs, so the result equals what live processing built (tests/derived/
// rebuild_test.cpp). The follow-up jobs table is kept (a done job is not re-queued).
// Deliveries keep their status until re-applied (ResetOptions::keep_statuses, which says
// why); the statuses end up exactly as live processing left them.
//
// Deliveries whose body retention removed (`[retention] body_days`) cannot be re-derived:
// they keep their outcome, and what only they had written is not in the rebuilt tables.
// Retention promises to keep those rows, so while the feed still holds changes of such
// deliveries rebuild refuses, before it changes anything, saying how many and which, unless
// --drop-expired says to go on without them (docs/decisions/090-rebuild-keeps-what-
// retention-kept.md says why it does not keep them instead). Going on, or with nothing to
// lose (an erasure's placeholder, a store already rebuilt so), it says which deliveries
// it passes over before it starts (stderr) and in its summary, with their seq ranges.
//
// Until its last step commits, the store records the rebuild as unfinished
// (store/unfinished_rebuild.h): killed midway, it leaves incomplete tables that say so
// (`serve`'s /readyz and read API, `query`); the next rebuild starts over, `serve` goes
// on from its last committed step.
//
// Refused while another healthhook process (a running server) processes the same
// database; a database locked by anything else fails after the busy timeout.
// Progress (rate, ETA) on stderr only when it is a terminal; one summary line on stdout.
// Exit: 0 done, 1 store failure, database in use or rows it would drop, 2 bad configuration.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/progress.h"
#include "processor/processor.h"
#include "store/database_location.h"

namespace hh::cli {
namespace {

struct RebuildFlags {
  SettingsFlags settings;
  int64_t pause_after_steps = -1;  // hidden, for tests: an interrupted rebuild (pause_for_tests)
  bool drop_expired = false;       // go on though rows of deliveries without a body would go
};

// --pause-after-steps N (tests only): once the tables are emptied and N steps committed,
// says so on stderr and waits until killed, so that a test can kill -9 a rebuild at a
// point it chooses rather than at a time it guesses.
[[noreturn]] void pause_for_tests(int64_t steps) {
  std::fprintf(stderr, "rebuild: paused after %lld steps (--pause-after-steps)\n", static_cast<long long>(steps));
  std::fflush(stderr);
  for (;;) ::pause();
}

// The seq ranges shown; the count covers all of them.
constexpr int64_t kRangesShown = 20;

// "1-10, 15, …": the seq ranges shown, ", …" when there may be more.
std::string seq_ranges(const std::vector<store::SeqRange>& ranges) {
  std::string text;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const store::SeqRange& range = ranges[i];
    if (i > 0) text += ", ";
    text += std::to_string(range.first);
    if (range.last != range.first) text += "-" + std::to_string(range.last);
  }
  if (static_cast<int64_t>(ranges.size()) == kRangesShown) text += ", …";
  return text;
}

// "12 deliveries without a body (removed by retention or an erasure: seq 1-10, 15, …)", or
// "" when there are none. (An erasure of the newest delivery leaves a row without a body.)
Result<std::string> bodies_missing(store::Store& store) {
  auto retention = store.open_body_retention();
  if (!retention) return fail(retention);
  auto removed = (*retention)->removed_so_far(kRangesShown);
  if (!removed) return fail(removed);
  if (removed->deliveries == 0) return std::string();
  return std::to_string(removed->deliveries) + " deliveries without a body (removed by retention or an erasure: seq " +
         seq_ranges(removed->ranges) + ")";
}

// Why rebuild refuses, or "" when no row of a delivery without a body is left to lose:
// "20 deliveries whose body retention removed (seq 1-20) wrote rows that a rebuild cannot
// re-derive and would drop (20 changes in the feed, 20 rows); …". The feed records every
// row a delivery wrote (a samples change covers a delivery's points of one series).
Result<std::string> rows_it_would_drop(store::Store& store) {
  auto retention = store.open_body_retention();
  if (!retention) return fail(retention);
  auto found = (*retention)->changes_without_body(kRangesShown);
  if (!found) return fail(found);
  if (found->deliveries == 0) return std::string();
  return std::to_string(found->deliveries) + " deliveries whose body retention removed (seq " +
         seq_ranges(found->ranges) + ") wrote rows that a rebuild cannot re-derive and would drop (" +
         std::to_string(found->changes) + " changes in the feed, " + std::to_string(found->rows) +
         " rows); nothing was changed (--drop-expired rebuilds without them)";
}

int run_rebuild(const RebuildFlags& flags) {
  auto settings = load_settings_or_report(flags.settings, "rebuild");
  if (!settings) return kExitBadConfig;
  if (store::names_missing_file(settings->database)) {
    report_error("rebuild", "database: " + settings->database + " does not exist");
    return kExitBadConfig;
  }
  auto store = open_store_or_report(*settings, "rebuild");
  if (!store) return kExitFailure;
  // The old tables are walked to be freed, the new ones read while inserting.
  if (auto bulk = store->prefer_bulk_reads(); !bulk) {
    report_error("rebuild", bulk.error());
    return kExitFailure;
  }
  // First the lock (refuses while a server processes this file), then the reset.
  auto processing = store->open_processing();
  if (!processing) {
    report_error("rebuild", processing.error());
    return kExitFailure;
  }
  auto applier = processor::Processor::create(std::move(*processing), processor::kCatchUpSteps);
  if (!applier) {
    report_error("rebuild", applier.error());
    return kExitFailure;
  }
  // Before anything is emptied: a damaged page would let the walk of the inbox skip rows.
  if (auto checked = store->check_pages(); !checked) {
    report_error("rebuild", checked.error() + " (nothing was changed)");
    return kExitFailure;
  }
  if (!flags.drop_expired) {
    auto dropped = rows_it_would_drop(*store);
    if (!dropped) {
      report_error("rebuild", dropped.error());
      return kExitFailure;
    }
    if (!dropped->empty()) {
      report_error("rebuild", *dropped);
      return kExitFailure;
    }
  }
  auto missing = bodies_missing(*store);
  if (!missing) {
    report_error("rebuild", missing.error());
    return kExitFailure;
  }
  if (!missing->empty()) {
    std::fprintf(stderr, "rebuild: warning: %s cannot be re-derived; what only they wrote will be missing\n",
                 missing->c_str());
  }
  if ((*applier)->unfinished_rebuild() > 0) {
    std::fprintf(stderr, "rebuild: note: the last rebuild did not finish (its tables are incomplete); starting over\n");
  }
  const auto started = std::chrono::steady_clock::now();
  if (auto reset = (*applier)->reset_derived({.keep_statuses = true}); !reset) {
    if (reset.error_kind() == ErrorKind::busy) {
      report_error("rebuild", store::loggable_location(settings->database) + " is busy: another process held its write lock for " +
                                  std::to_string(settings->commit_deadline_ms) + " ms; nothing was changed");
    } else {
      report_error("rebuild", "emptying the derived tables: " + reset.error());
    }
    return kExitFailure;
  }
  if (flags.pause_after_steps == 0) pause_for_tests(0);
  Progress progress("rebuild");
  int64_t reports = 0;  // the first comes before any step, then one after each
  auto done = (*applier)->run_until_caught_up([&](int64_t applied_seq, int64_t last_seq) {
    progress.set_total(static_cast<uint64_t>(last_seq));
    progress.update(static_cast<uint64_t>(applied_seq));
    if (flags.pause_after_steps > 0 && reports++ == flags.pause_after_steps) pause_for_tests(flags.pause_after_steps);
  });
  progress.finish();
  if (!done) {
    report_error("rebuild", done.error() + " (the derived tables are incomplete and recorded as such: run rebuild "
                                           "again, or start serve)");
    return kExitFailure;
  }
  const double seconds =
      std::max(1e-6, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  const auto& stats = (*applier)->stats();
  const uint64_t deliveries = stats.processed + stats.invalid + stats.ignored + stats.unknown;
  std::printf(
      "rebuild: %llu deliveries (%llu processed, %llu invalid, %llu ignored, %llu unknown), %llu samples, "
      "%llu rows, %.2f s, %.0f rows/s\n",
      static_cast<unsigned long long>(deliveries), static_cast<unsigned long long>(stats.processed.load()),
      static_cast<unsigned long long>(stats.invalid.load()), static_cast<unsigned long long>(stats.ignored.load()),
      static_cast<unsigned long long>(stats.unknown.load()),
      static_cast<unsigned long long>(stats.samples_applied.load()),
      static_cast<unsigned long long>(stats.rows_applied.load()), seconds,
      static_cast<double>(stats.rows_applied.load()) / seconds);
  if (!missing->empty()) std::printf("rebuild: not re-derived: %s\n", missing->c_str());
  return kExitOk;
}

}  // namespace

void add_rebuild_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RebuildFlags>();
  auto* command = app.add_subcommand("rebuild", "Re-derive every table from the inbox (keeps deliveries and jobs)");
  add_settings_flags(*command, flags->settings, /*with_listen=*/false);
  command->add_flag("--drop-expired", flags->drop_expired,
                    "Rebuild even though deliveries whose body retention removed wrote rows, which are dropped");
  command->add_option("--pause-after-steps", flags->pause_after_steps)->group("");  // tests: an interrupted rebuild
  command->callback([flags, &exit_code] { exit_code = run_rebuild(*flags); });
}

}  // namespace hh::cli
