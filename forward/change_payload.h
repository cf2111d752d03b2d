#pragma once
// The body of a `changes`-mode POST (spec §10; schemas/forward/changes.schema.json):
//
//   {"type":"healthhook.changes","destination":"…","changes":[{"id":"hhf_12", "event_type",
//    "table", "key", "op", "seq", "user_id", "client_user_id", "row_count", "from", "to",
//    "row" | "rows"}, …]}
//
// `row` is the changed row as `healthhook query <table> --format jsonl` prints it (the one
// formatter, store/row_format.h), read when the POST is made: the row as it is then (a
// later change of the same row is forwarded too). null when the row no longer exists
// (erased) and for samples and stream points. Samples carry `rows`: the samples the
// change wrote that are still current (a later delivery's samples are its change's).
// Stream points carry neither: a stream of 100,000 points is read with the read API.
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/outbox.h"
#include "store/read_store.h"

namespace hh::forward {

// "hhf_<outbox_id>": a change's message id, and a POST's (its first change's).
std::string message_id(int64_t outbox_id);

// The whole POST body for `entries` (kind "change"), read inside one snapshot of `rows`.
Result<std::string> render_changes(store::ReadStore& rows, std::string_view destination,
                                   std::span<const store::OutboxEntry* const> entries);

}  // namespace hh::forward
