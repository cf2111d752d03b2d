#pragma once
// The body of a `changes`-mode POST (spec §10; schemas/forward/changes.schema.json):
//
//   {"type":"healthhook.changes","destination":"…","changes":[{"id":"hhf_12", "event_type",
//    "table", "key", "op", "seq", "user_id", "client_user_id", "row_count", "from", "to",
//    "row" | "rows"}, …]}
//
// `row` is the changed row as `healthhook query <table> --format jsonl` prints it (the one
// formatter, store/row_format.h), read when the POST is pinned, before it first goes out:
// the row as it was then, sent again as it was by every retry (a later change of the same
// row is forwarded too, under its own id). null when the row no longer exists
// (erased) and for samples and stream points. Samples carry `rows`: the samples the
// change wrote that are still current (a later delivery's samples are its change's).
// Stream points carry neither: a stream of 100,000 points is read with the read API.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/outbox.h"
#include "store/read_store.h"

namespace hh::forward {

// "hhf_<outbox_id>": a change's message id, and a POST's (its first change's).
std::string message_id(int64_t outbox_id);
// A POST's webhook-id from its post_id: its first change's id; a POST formed again from
// the first user and resource of a POST of several that failed (post_id -<its first
// outbox_id>, forward/post_scheduler.h) is "hhf_<first>.1", an id never used before.
std::string post_message_id(int64_t post_id);

// Each of `entries` (kind "change") as its object in a POST's "changes", read inside one
// snapshot of `rows`: what a POST pins (store::OutboxEntry::content) before it first goes
// out, so that every attempt carries the same bytes.
Result<std::vector<std::string>> render_change_items(store::ReadStore& rows,
                                                    std::span<const store::OutboxEntry* const> entries);

// The POST body around `items` (render_change_items(), or the pinned contents).
std::string changes_body(std::string_view destination, std::span<const std::string> items);

// The body of `entries` in changes_body(): each change's kept content (what it carried
// when a POST of it failed before; an id names one content for ever) where it has one,
// the others' rows read now (render_change_items()).
Result<std::string> render_changes(store::ReadStore& rows, std::string_view destination,
                                   std::span<const store::OutboxEntry* const> entries);

}  // namespace hh::forward
