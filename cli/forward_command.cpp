// healthhook forward: the forwarding outbox from the command line (spec §10).
//
//   healthhook forward [list] [--dead | --dropped | --pending] [--destination N] [--limit K] [--format table|jsonl]
//   healthhook forward show ID [--format table|jsonl]
//   healthhook forward requeue ID | --dead | --dropped  [--destination N]
//   healthhook forward pause DEST   |   healthhook forward resume DEST
//
// `--destination` takes a [[forward]] name or its position (1 = the first block). `list`
// starts with one line per destination (pending, dead, dropped, the oldest waiting entry's
// age), then the entries; `list --dropped` the ranges of deliveries (seq) whose entries the
// disk budget dropped. `show` prints the entry and the body it would be POSTed with now.
// `requeue` makes entries pending again, due now, attempts 0 (with every entry of the
// same POST: it goes out again whole, under its id); `requeue ID` of an entry that is
// already pending changes nothing and says so; `requeue --dropped` makes the dropped
// entries again from the change feed (changes mode) or the inbox (deliveries mode), and
// says how many could not be made (their rows erased, or bodies removed by retention). A
// running `serve` sends them within a second.
// `pause` stops a destination's sending (within a few seconds in a running `serve`; kept
// in the store, so across restarts) while its entries keep accumulating in the outbox
// (within max_outbox_mib); `resume` lets them go.
//
// Safe while `serve` runs (a connection of its own; writes wait for the writer). Exit 0 on
// success, 1 when the entry does not exist or the database fails, 2 for bad usage.
#include <algorithm>
#include <charconv>
#include <iostream>

#include "app/store_settings.h"
#include "config/settings.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "forward/change_payload.h"
#include "store/open_store.h"
#include "store/open_readers.h"
#include "store/database_location.h"

namespace hh::cli {
namespace {

struct ForwardFlags {
  SettingsFlags settings;
  std::optional<std::string> destination;
  bool dead = false, dropped = false, pending = false;
  int64_t limit = 1000;
  std::string format = "table";
  int64_t show_id = 0;
  std::optional<int64_t> requeue_id;
  std::string pause_destination;
};

std::string outbox_json_line(const store::OutboxEntry& e) {
  std::string out;
  json::ObjectWriter line(out);
  auto optional_text = [](const std::optional<std::string>& text) {
    return text ? std::optional<std::string_view>(*text) : std::nullopt;
  };
  line.integer("outbox_id", e.outbox_id).string("destination", e.destination).string("kind", e.kind);
  line.integer("seq", e.seq).optional_string("event_type", optional_text(e.event_type));
  line.string("table", e.table_name).string("key", e.row_key).string("op", e.op).integer("row_count", e.row_count);
  line.optional_string("user_id", optional_text(e.user_id)).optional_string("order_key", optional_text(e.order_key));
  line.string("state", e.state).integer("attempts", e.attempts);
  if (e.post_id) {
    line.string("post", forward::post_message_id(*e.post_id));
  } else {
    line.null("post");
  }
  line.string("created_at", format_rfc3339_ms(e.created_at_ms));
  line.string("next_attempt_at", format_rfc3339_ms(e.next_attempt_at_ms));
  if (e.last_status) {
    line.integer("last_status", *e.last_status);
  } else {
    line.null("last_status");
  }
  line.optional_string("last_error", optional_text(e.last_error));
  line.close();
  return out;
}

void print_outbox_figures(const std::vector<store::OutboxFigures>& figures) {
  const int64_t now = unix_now_ms();
  std::cout << table_cell("DESTINATION", 32) << " " << table_cell("PENDING", 9) << " " << table_cell("DEAD", 9) << " "
            << table_cell("DROPPED", 9) << " OLDEST PENDING\n";
  for (const auto& f : figures) {
    const std::string oldest = f.oldest_pending_created_at_ms
                                   ? std::to_string((now - *f.oldest_pending_created_at_ms) / 1000) + " s ago"
                                   : "-";
    std::cout << table_cell(f.destination, 32) << " " << table_cell(std::to_string(f.pending), 9) << " "
              << table_cell(std::to_string(f.dead), 9) << " " << table_cell(std::to_string(f.dropped), 9) << " "
              << oldest << "\n";
  }
  // Not entries yet: the sender makes them as it catches up (docs/forwarding.md).
  for (const auto& f : figures) {
    if (f.unmade_deliveries > 0) {
      std::cout << f.destination << ": " << f.unmade_deliveries
                << " more deliveries wait for the sender to make their entries (the backend was behind)\n";
    }
  }
  std::cout << "\n";
}

// A line per configured destination, in the configuration's order, one with nothing waiting
// too, then any the outbox still holds entries of that the configuration no longer names;
// only `only`'s when given.
std::vector<store::OutboxFigures> listed_figures(const config::Settings& settings,
                                                 std::vector<store::OutboxFigures> stored,
                                                 const std::optional<std::string>& only) {
  std::vector<store::OutboxFigures> listed;
  for (const auto& forward : settings.forwards) {
    const auto found = std::find_if(stored.begin(), stored.end(),
                                    [&](const store::OutboxFigures& f) { return f.destination == forward.name; });
    if (found == stored.end()) {
      store::OutboxFigures nothing;
      nothing.destination = forward.name;
      listed.push_back(std::move(nothing));
    } else {
      listed.push_back(std::move(*found));
      stored.erase(found);
    }
  }
  for (auto& f : stored) listed.push_back(std::move(f));
  std::erase_if(listed, [&](const store::OutboxFigures& f) { return only && f.destination != *only; });
  return listed;
}

std::string dropped_json_line(const store::DroppedRange& r) {
  std::string out;
  json::ObjectWriter line(out);
  line.string("destination", r.destination).integer("first_seq", r.first_seq).integer("last_seq", r.last_seq);
  line.integer("entries", r.entries).string("dropped_at", format_rfc3339_ms(r.dropped_at_ms));
  line.close();
  return out;
}

void print_dropped_ranges(const std::vector<store::DroppedRange>& ranges) {
  std::cout << table_cell("DESTINATION", 20) << " " << table_cell("DELIVERIES (SEQ)", 28) << " "
            << table_cell("ENTRIES", 9) << " DROPPED AT (UTC)\n";
  for (const auto& r : ranges) {
    std::cout << table_cell(r.destination, 20) << " "
              << table_cell("seq " + std::to_string(r.first_seq) + "-" + std::to_string(r.last_seq), 28) << " "
              << table_cell(std::to_string(r.entries), 9) << " " << format_rfc3339_ms(r.dropped_at_ms) << "\n";
  }
}

// `requeue --dropped`: each selected destination's dropped ranges made into entries again.
int requeue_dropped(const config::Settings& settings, store::Outbox& outbox,
                    const std::optional<std::string>& destination) {
  int64_t recreated = 0, dropped = 0, not_recreated = 0, ranges = 0;
  auto options = app::serve_store_options(settings);
  if (!options) {
    report_error("forward requeue", options.error());
    return kExitBadConfig;
  }
  for (const store::ForwardRule& rule : options->forward_rules) {
    if (destination && rule.destination != *destination) continue;
    auto made = outbox.requeue_dropped(rule);
    if (!made) {
      report_error("forward requeue", rule.destination + ": " + made.error());
      return kExitFailure;
    }
    recreated += made->recreated;
    dropped += made->dropped;
    not_recreated += made->not_recreated;
    ranges += made->ranges;
  }
  std::cout << "re-created " << recreated << " outbox entr" << (recreated == 1 ? "y" : "ies") << " from " << ranges
            << " dropped range" << (ranges == 1 ? "" : "s") << " (" << dropped << " entries dropped)\n";
  if (not_recreated > 0) {
    std::cout << not_recreated << " dropped entr" << (not_recreated == 1 ? "y is" : "ies are")
              << " gone: the change feed or the inbox no longer holds their rows (erased, or bodies removed by "
                 "[retention] body_days)\n";
  }
  return kExitOk;
}

void print_outbox_entries(const std::vector<store::OutboxEntry>& entries) {
  std::cout << table_cell("ID", 9) << " " << table_cell("DESTINATION", 20) << " " << table_cell("STATE", 8) << " "
            << table_cell("ATTEMPTS", 8) << " " << table_cell("NEXT ATTEMPT (UTC)", 24) << " "
            << table_cell("WHAT", 48) << " LAST ERROR\n";
  for (const auto& e : entries) {
    std::cout << table_cell(std::to_string(e.outbox_id), 9) << " " << table_cell(e.destination, 20) << " "
              << table_cell(e.state, 8) << " " << table_cell(std::to_string(e.attempts), 8) << " "
              << table_cell(format_rfc3339_ms(e.next_attempt_at_ms), 24) << " "
              << table_cell(e.table_name + " " + e.row_key + " (seq " + std::to_string(e.seq) + ")", 48) << " "
              << (e.last_error ? table_cell(*e.last_error, 80) : "") << "\n";
  }
}

// The body the entry would be POSTed with now, as the sender makes it (render_changes):
// its POST's when pinned (every entry of the POST, each with the content it carried, the
// rows of those that carry none read now), or alone when not pinned yet.
Result<std::string> outbox_body_now(const config::Settings& settings, store::Outbox& outbox,
                                    const store::OutboxEntry& e) {
  std::vector<store::OutboxEntry> post{e};
  if (e.kind != "delivery" && e.post_id) {
    auto pinned = outbox.entries_of_post(*e.post_id);
    if (!pinned) return fail(pinned);
    if (!pinned->empty()) post = std::move(*pinned);
  }
  std::vector<const store::OutboxEntry*> entries;
  for (const auto& p : post) entries.push_back(&p);
  auto database = app::database(settings);
  if (!database) return fail(database);
  auto rows = store::open_read_store(*database);
  if (!rows) return fail(rows);
  if (e.kind == "delivery") {
    store::StoredDelivery delivery;
    auto found = (*rows)->deliveries().find(e.row_key, delivery);
    if (!found) return fail(found);
    if (!*found) return std::string("(the delivery is no longer in the inbox)");
    if (delivery.body_removed_at_ms) return std::string("(the body was removed by retention)");
    return std::string(delivery.body);
  }
  return forward::render_changes(**rows, e.destination, entries);
}

int run_forward_show(const config::Settings& settings, store::Outbox& outbox, const ForwardFlags& flags) {
  auto entry = outbox.find(flags.show_id);
  if (!entry) {
    report_error("forward show", entry.error());
    return kExitFailure;
  }
  if (!*entry) {
    report_error("forward show", "no outbox entry " + std::to_string(flags.show_id));
    return kExitFailure;
  }
  const store::OutboxEntry& e = **entry;
  auto body = outbox_body_now(settings, outbox, e);
  if (!body) {
    report_error("forward show", body.error());
    return kExitFailure;
  }
  if (flags.format == "jsonl") {
    std::string line = outbox_json_line(e);
    line.pop_back();  // '}': the body joins the object
    line += ",\"body\":";
    json::append_string(line, *body);
    std::cout << line << "}\n";
    return kExitOk;
  }
  std::cout << "outbox_id:       " << e.outbox_id << "\n"
            << "destination:     " << e.destination << "\n"
            << "kind:            " << e.kind << "\n"
            << "state:           " << e.state << "\n"
            << "seq:             " << e.seq << "\n"
            << "event_type:      " << e.event_type.value_or("") << "\n"
            << "table:           " << e.table_name << "\n"
            << "key:             " << e.row_key << "\n"
            << "op:              " << e.op << "\n"
            << "order_key:       " << e.order_key.value_or("") << "\n"
            << "attempts:        " << e.attempts << "\n"
            << "post:            " << (e.post_id ? forward::post_message_id(*e.post_id) : "") << "\n"
            << "created_at:      " << format_rfc3339_ms(e.created_at_ms) << "\n"
            << "next_attempt_at: " << format_rfc3339_ms(e.next_attempt_at_ms) << "\n"
            << "last_status:     " << (e.last_status ? std::to_string(*e.last_status) : "") << "\n"
            << "last_error:      " << e.last_error.value_or("") << "\n"
            << "body:            " << *body << "\n";
  return kExitOk;
}

// `forward pause|resume DEST` (the console's forward-pause/-resume do the same call).
int run_forward_pause(const config::Settings& settings, const ForwardFlags& flags, bool pause) {
  const std::string_view command = pause ? "forward pause" : "forward resume";
  const auto name = config::forward_named(settings.forwards, flags.pause_destination);
  if (!name) {
    report_error(command, "no [[forward]] named or numbered \"" + flags.pause_destination + "\"");
    return kExitBadConfig;
  }
  auto database = existing_database_or_report(settings, command);
  if (!database) return kExitBadConfig;
  auto opened = store::open_outbox(*database);
  if (!opened) {
    report_error(command, opened.error());
    return kExitFailure;
  }
  auto changed = (*opened)->set_paused(*name, pause, unix_now_ms());
  if (!changed) {
    report_error(command, changed.error());
    return kExitFailure;
  }
  std::cout << *name << (pause ? " paused" : " resumed") << (*changed ? "" : " (it already was)") << "\n";
  return kExitOk;
}

int run_forward(const ForwardFlags& flags, bool show, bool requeue, bool pause, bool resume) {
  auto settings = load_settings_or_report(flags.settings, "forward");
  if (!settings) return kExitBadConfig;
  if (pause || resume) return run_forward_pause(*settings, flags, pause);
  store::OutboxSelection selection;
  if (flags.destination) {
    selection.destination = config::forward_named(settings->forwards, *flags.destination);
    if (!selection.destination) {
      report_error("forward", "--destination: no [[forward]] named or numbered \"" + *flags.destination + "\"");
      return kExitBadConfig;
    }
  }
  if (static_cast<int>(flags.dead) + static_cast<int>(flags.dropped) + static_cast<int>(flags.pending) > 1) {
    report_error("forward", "give at most one of --dead, --dropped, --pending");
    return kExitBadConfig;
  }
  if (flags.dead) selection.state = "dead";
  if (flags.pending) selection.state = "pending";
  selection.limit = flags.limit;
  auto database = existing_database_or_report(*settings, "forward");
  if (!database) return kExitBadConfig;
  auto opened = store::open_outbox(*database);
  if (!opened) {
    report_error("forward", opened.error());
    return kExitFailure;
  }
  store::Outbox& outbox = **opened;
  if (show) return run_forward_show(*settings, outbox, flags);
  if (requeue) {
    if (flags.requeue_id.has_value() == (flags.dead || flags.dropped)) {
      report_error("forward requeue", "give an outbox id, or --dead or --dropped");
      return kExitBadConfig;
    }
    if (flags.dropped) return requeue_dropped(*settings, outbox, selection.destination);
    if (flags.requeue_id) {
      auto one = store::requeue_unless_pending(outbox, *flags.requeue_id, unix_now_ms());
      if (!one) {
        report_error("forward requeue", one.error());
        return kExitFailure;
      }
      if (!one->exists) {
        report_error("forward requeue", "no outbox entry " + std::to_string(*flags.requeue_id));
        return kExitFailure;
      }
      if (one->requeued == 0) {
        std::cout << "outbox entry " << *flags.requeue_id << " is already pending: not requeued\n";
        return kExitOk;
      }
      std::cout << "requeued " << one->requeued << " outbox entr" << (one->requeued == 1 ? "y" : "ies") << "\n";
      return kExitOk;
    }
    auto count = outbox.requeue(selection, unix_now_ms());
    if (!count) {
      report_error("forward requeue", count.error());
      return kExitFailure;
    }
    std::cout << "requeued " << *count << " outbox entr" << (*count == 1 ? "y" : "ies") << "\n";
    return kExitOk;
  }
  if (flags.dropped) {
    auto ranges = outbox.dropped(selection.destination);
    if (!ranges) {
      report_error("forward", ranges.error());
      return kExitFailure;
    }
    if (flags.format == "jsonl") {
      for (const auto& r : *ranges) std::cout << dropped_json_line(r) << "\n";
      return kExitOk;
    }
    print_dropped_ranges(*ranges);
    return kExitOk;
  }
  auto entries = outbox.list(selection);
  if (!entries) {
    report_error("forward", entries.error());
    return kExitFailure;
  }
  if (flags.format == "jsonl") {
    for (const auto& e : *entries) std::cout << outbox_json_line(e) << "\n";
    return kExitOk;
  }
  auto figures = outbox.figures();
  if (!figures) {
    report_error("forward", figures.error());
    return kExitFailure;
  }
  print_outbox_figures(listed_figures(*settings, std::move(*figures), selection.destination));
  if (auto paused = outbox.paused(); paused && !paused->empty()) {
    std::cout << "paused:";
    for (const auto& name : *paused) std::cout << " " << name;
    std::cout << "\n\n";
  }
  print_outbox_entries(*entries);
  return kExitOk;
}

}  // namespace

void add_forward_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ForwardFlags>();
  auto* command = app.add_subcommand("forward", "List, show and re-queue forwarded messages (the outbox)");
  add_settings_flags(*command, flags->settings, false);
  command->add_option("--destination", flags->destination, "A [[forward]] name, or its position (1 = first)");
  command->add_flag("--dead", flags->dead, "Only dead entries (list), or every dead entry (requeue)");
  command->add_flag("--dropped", flags->dropped,
                    "The ranges of dropped entries (list), or make every dropped entry again (requeue)");
  command->add_flag("--pending", flags->pending, "Only entries waiting to be sent (list)");
  command->add_option("--limit", flags->limit, "At most this many entries (list; default 1000)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  command->add_option("--format", flags->format, "table (default) or jsonl")->check(CLI::IsMember({"table", "jsonl"}));
  command->require_subcommand(0, 1);
  command->fallthrough();  // the flags may follow `list`, `show ID`, `requeue`

  auto* list = command->add_subcommand("list", "List outbox entries (the default)");
  (void)list;
  auto* show = command->add_subcommand("show", "Show one entry and the body of its POST (as pinned: what every attempt sends)");
  show->add_option("id", flags->show_id, "Outbox id")->required();
  auto* requeue = command->add_subcommand("requeue", "Send entries again: one by id (with its POST), or every dead or dropped one");
  requeue->add_option("id", flags->requeue_id, "Outbox id");
  auto* pause = command->add_subcommand("pause", "Stop sending to a destination; entries keep accumulating");
  pause->add_option("destination", flags->pause_destination, "A [[forward]] name, or its position")->required();
  auto* resume = command->add_subcommand("resume", "Send to a paused destination again");
  resume->add_option("destination", flags->pause_destination, "A [[forward]] name, or its position")->required();

  command->callback([flags, show, requeue, pause, resume, &exit_code] {
    exit_code = run_forward(*flags, show->parsed(), requeue->parsed(), pause->parsed(), resume->parsed());
  });
}

}  // namespace hh::cli
