#pragma once
// Two users' deliveries of every event family, from the service's documented payloads
// (schemas/examples/): what the erasure tests (tests/derived/purge_user_test.cpp,
// tests/postgres/pg_retention_erasure_test.cpp) fill their stores with. Each user's
// deliveries are the examples with every user id replaced by theirs and every other id
// prefixed, so two users' rows have different keys and a row's text tells whose it is.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "events/envelope_peek.h"
#include "store/inbox.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/migrations.h"
#include "tests/support/examples.h"

namespace hh::test {

// The users of the examples (each file names one of them).
inline const std::string kExampleUsers[] = {"4a29dbc7-6db3-4c83-bfac-70a20a4be1b2", "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10",
                                     "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44", "bf6222fb-5a3c-4d1e-9f2b-7c8d9e0f1a2b"};

// Webhook examples that name a user (every family: summaries, timeseries, streams,
// backfills, connections, devices, lab events, hypnogram, unknown events).
inline const char* const kUserWebhookExamples[] = {
    "connection-created-old-source.json", "connection-created.json",   "connection-error.json",
    "continuous-query.json",              "device.json",               "historical-backfill-without-is-final.json",
    "historical-backfill.json",           "hypnogram.json",            "lab-order.json",
    "lab-appointment.json",               "lab-parsing-job-completed.json", "lab-result-critical.json",
    "new-resource-unknown-shape.json",    "summary-activity-old-source.json", "summary-activity.json",
    "summary-body.json",                  "summary-electrocardiogram.json", "summary-meal.json",
    "summary-menstrual-cycle.json",       "summary-profile.json",      "summary-sleep-cycle.json",
    "summary-sleep.json",                 "summary-workouts.json",     "timeseries-blood-pressure.json",
    "timeseries-cholesterol.json",        "timeseries-extra-fields.json", "timeseries-glucose.json",
    "timeseries-heartrate.json",          "timeseries-steps-old-envelope.json", "timeseries-steps-old-source.json",
    "timeseries-steps.json",              "workout-stream.json"};

// Fetched examples (body + context) and the event type the fetcher stores them with.
inline const std::pair<const char*, const char*> kUserFetchedExamples[] = {
    {"fetched-stream", "fetch.workout_stream"},
    {"fetched-summaries-page", "fetch.summaries.sleep"},
    {"fetched-meals-page", "fetch.summaries.meal"},
    {"fetched-profile", "fetch.summary.profile"},
    {"fetched-timeseries-page", "fetch.timeseries.heartrate"},
    {"fetched-workouts-page", "fetch.workouts_for_streams"}};

inline constexpr int64_t kTwoUsersBaseMs = 1717236000000;

// The example as user `user`'s: every user id of the examples becomes `user`, every other
// UUID (summary, device, order, workout ids…) gets the prefix `id_prefix`, so the two
// users' rows have different keys.
inline std::string two_users_personalise(const std::string& text, const std::string& user, const std::string& id_prefix) {
  static const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), uuid), end; it != end; ++it) {
    out.append(last, text.cbegin() + it->position());
    const std::string found = it->str();
    const bool is_user = std::find(std::begin(kExampleUsers), std::end(kExampleUsers), found) != std::end(kExampleUsers);
    out += is_user ? user : id_prefix + found;
    last = text.cbegin() + it->position() + it->length();
  }
  out.append(last, text.cend());
  return out;
}

inline store::NewDelivery two_users_webhook(const std::string& message_id, const std::string& body, int64_t received_at) {
  store::NewDelivery d;
  d.message_id = message_id;
  d.received_at_ms = received_at;
  d.webhook_timestamp = received_at / 1000;
  d.event_type = events::peek_event_type(body);
  d.headers_json = R"({"svix-id":")" + message_id + R"(","svix-signature":"v1,test"})";
  d.body = body;
  return d;
}

inline store::NewDelivery two_users_fetched(const std::string& message_id, const std::string& event_type,
                                 const std::string& context, const std::string& body, int64_t received_at) {
  store::NewDelivery d;
  d.message_id = message_id;
  d.origin = store::Origin::fetch;
  d.received_at_ms = received_at;
  d.event_type = event_type;
  d.headers_json = context;
  d.body = body;
  return d;
}

// Deliveries per user that are not quite JSON (two_users_deliveries), message ids
// "msg-<tag>-not-utf8", "msg-<tag>-trailing", "msg-<tag>-cut-short" and "msg-<tag>-array".
inline constexpr size_t kTwoUsersAlmostJson = 4;

// Every user example as `user`'s, message ids "msg-<tag>-…" (which name no user), and
// kTwoUsersAlmostJson deliveries that are not quite JSON.
inline std::vector<store::NewDelivery> two_users_deliveries(const std::string& user, const std::string& id_prefix,
                                                      const std::string& tag, int64_t& clock) {
  std::vector<store::NewDelivery> out;
  for (const char* name : kUserWebhookExamples) {
    out.push_back(two_users_webhook("msg-" + tag + "-" + name,
                                two_users_personalise(example_file(name), user, id_prefix), ++clock));
  }
  // Signed but not JSON, so marked invalid, yet naming the user (rows/delivery_user.h):
  // a byte that is not UTF-8 inside a string, bytes after the object's end, and two below
  // (kTwoUsersAlmostJson of them).
  const std::string summary = two_users_personalise(example_file(kUserWebhookExamples[0]), user, id_prefix);
  std::string bad_byte = summary.substr(0, summary.rfind('}')) + ",\"note\":\"caf\xe9\"}";
  out.push_back(two_users_webhook("msg-" + tag + "-not-utf8", bad_byte, ++clock));
  out.push_back(two_users_webhook("msg-" + tag + "-trailing", summary + "\n}junk", ++clock));
  // Cut short just after the user's id, and wrapped in an array: their id is in the body,
  // where no parser looks.
  const size_t named = summary.find("\"" + user + "\"");
  out.push_back(two_users_webhook("msg-" + tag + "-cut-short", summary.substr(0, named + user.size() + 4), ++clock));
  out.push_back(two_users_webhook("msg-" + tag + "-array", "[" + summary + "]", ++clock));
  for (const auto& [name, event_type] : kUserFetchedExamples) {
    const std::string base(name);
    out.push_back(two_users_fetched("fetch:" + tag + ":" + base, event_type,
                                two_users_personalise(example_file(base + ".context.json"), user, id_prefix),
                                two_users_personalise(example_file(base + ".body.json"), user, id_prefix),
                                ++clock));
  }
  return out;
}

// Users A ("user-a", other ids "ida-…") and B ("user-b", "idb-…"), their deliveries
// interleaved, then deliveries that name nobody (ping, an unknown event without a user, the
// provider list), received a millisecond apart from kTwoUsersBaseMs + 1 on.
inline std::vector<store::NewDelivery> two_users_corpus(int64_t& clock) {
  auto a = two_users_deliveries("user-a", "ida-", "A", clock);
  auto b = two_users_deliveries("user-b", "idb-", "B", clock);
  std::vector<store::NewDelivery> all;
  for (size_t i = 0; i < a.size(); ++i) {
    all.push_back(a[i]);
    all.push_back(b[i]);
  }
  all.push_back(two_users_webhook("msg-ping", example_file("ping.json"), ++clock));
  all.push_back(two_users_webhook("msg-unknown", example_file("unknown-event.json"), ++clock));
  all.push_back(two_users_fetched("fetch:providers:1", "fetch.providers", example_file("fetched-providers.context.json"),
                                  example_file("fetched-providers.body.json"), ++clock));
  return all;
}

// Whether a row's text names A or B (their user id, or an id of theirs).
inline bool two_users_names_a(const std::string& row) {
  return row.find("user-a") != std::string::npos || row.find("ida-") != std::string::npos;
}
inline bool two_users_names_b(const std::string& row) {
  return row.find("user-b") != std::string::npos || row.find("idb-") != std::string::npos;
}

// A store as healthhook left it before migration 009 (schema version 8): built with
// today's code, then the user columns, their indexes and views taken away again, and
// fetched-only streams without the user they now get.
inline void strip_user_columns(sqlite::Connection& db) {
  for (const char* sql : {"DROP VIEW unattributed_rows", "DROP INDEX lab_parsing_jobs_user",
                          "DROP INDEX workout_streams_user", "DROP INDEX jobs_user", "DROP VIEW change_owners"}) {
    BOOST_REQUIRE_MESSAGE(db.exec(sql), sql);
  }
  const std::string_view v8 = store::migrations().at(7).sql;
  BOOST_REQUIRE(store::migrations().at(7).name == "008-outbox");
  BOOST_REQUIRE(db.exec(std::string(v8.substr(v8.find("CREATE VIEW change_owners")))));
  for (const char* table : {"delivery_outcomes", "removed_bodies", "lab_parsing_jobs", "changes", "jobs"}) {
    BOOST_REQUIRE_MESSAGE(db.exec("ALTER TABLE " + std::string(table) + " DROP COLUMN user_id"), table);
  }
  BOOST_REQUIRE(db.exec("UPDATE workout_streams SET user_id = NULL WHERE notice_seq IS NULL"));
  // Migrations 010 (the outbox's pinned POSTs), 011 (the service's calls), 012 (paused
  // destinations), 013 and 014 (indexes), 015 (forwarding positions), 016 (the retention walk), 017 (the
  // outbox's contents), 018 (the rebuild marker) came after 009: taken away too, so that
  // opening the store runs them all again, in order, as an upgrade from version 8 does (011 rebuilds jobs; its CHECK can stay).
  for (const char* sql : {"ALTER TABLE processor_state DROP COLUMN rebuild_through",
                          "ALTER TABLE outbox DROP COLUMN content", "ALTER TABLE outbox DROP COLUMN content_bytes", "DROP TABLE retention_walk", "DROP VIEW forward_backlog", "DROP TABLE forward_positions", "DROP TABLE forward_pauses", "ALTER TABLE connections DROP COLUMN deregistered_at", "ALTER TABLE summaries DROP COLUMN app_id",
                          "ALTER TABLE series DROP COLUMN app_id", "DROP TRIGGER outbox_head_deleted", "DROP TRIGGER outbox_head_left", "DROP INDEX outbox_keys",
                          "DROP INDEX outbox_due_heads", "DROP INDEX outbox_unclassified", "DROP INDEX outbox_posts", "DROP INDEX outbox_oldest", "DROP INDEX jobs_state",
                          "DROP TABLE outbox_dropped", "ALTER TABLE outbox DROP COLUMN head",
                          "ALTER TABLE outbox RENAME COLUMN post_id TO batch_id",
                          "CREATE INDEX outbox_destination ON outbox (destination, state, outbox_id)"}) {
    BOOST_REQUIRE_MESSAGE(db.exec(sql), sql);
  }
  BOOST_REQUIRE(db.exec("PRAGMA user_version = 8"));
}

}  // namespace hh::test
