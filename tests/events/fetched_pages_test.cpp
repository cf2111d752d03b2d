// Fetched rows (origin "fetch"): the fetch context in headers_json and the page bodies of
// schemas/examples/fetched-*.
#include <boost/test/unit_test.hpp>

#include <string>

#include "fixtures.h"

namespace hh::events {

BOOST_AUTO_TEST_SUITE(fetched_pages_test)

namespace {

std::string text(std::optional<std::string_view> value) { return value ? std::string(*value) : "<null>"; }
using test::read_example;

}  // namespace

BOOST_FIXTURE_TEST_SUITE(fetched_pages, test::ParserFixture)

BOOST_AUTO_TEST_CASE(workout_stream) {
  const ParseResult r = fetched_example("fetched-stream");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.status == Status::processed));
  BOOST_TEST((r.family == Family::fetched_stream));
  BOOST_REQUIRE(rows.fetched_stream.has_value());
  BOOST_TEST(rows.fetched_stream->workout_id == "fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a");
  BOOST_TEST(rows.fetched_stream->point_count == 4u);
  BOOST_TEST(rows.fetched_stream->body == body);
}

BOOST_AUTO_TEST_CASE(malformed_stream_is_invalid) {
  const ParseResult r = fetched(R"({"kind":"workout_stream","workout_id":"w1"})", R"({"time":[1,2],"heartrate":[120,"fast"]})");
  BOOST_TEST((r.status == Status::invalid));
  BOOST_TEST(r.error == "stream: heartrate[1]: not a number");
  BOOST_TEST(!rows.fetched_stream.has_value());
  BOOST_TEST(fetched(R"({"kind":"workout_stream"})", "{}").error == "fetch context.workout_id: missing");
}

BOOST_AUTO_TEST_CASE(summaries_page) {
  const ParseResult r = fetched_example("fetched-summaries-page");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::fetched_summaries));
  BOOST_REQUIRE(rows.summaries.size() == 2u);
  BOOST_TEST(rows.summaries[0].resource == "sleep");
  BOOST_TEST(rows.summaries[0].id == "5b1c8d0a-6f1e-4a43-9d3c-2f6c2b9e7a11");
  BOOST_TEST(text(rows.summaries[0].provider) == "oura");
  BOOST_TEST(rows.summaries[0].source_type == "ring");
  BOOST_TEST(rows.summaries[0].start_ms.value_or(-1) == 1684275000000);
  BOOST_TEST(rows.summaries[1].id == "61f2e3d4-c5b6-4a79-8e0f-1a2b3c4d5e6f");
  BOOST_TEST(rows.summaries[1].source_type == "app");
  BOOST_TEST(rows.summaries[1].start_ms.value_or(-1) == 1684242300000);
  BOOST_TEST(rows.summaries[1].data_json.substr(0, 12) == "{\n      \"id\"");
  BOOST_TEST(rows.workout_ids_to_fetch.empty());
}

BOOST_AUTO_TEST_CASE(summaries_page_fills_user_and_provider_from_the_context) {
  const ParseResult r = fetched(R"({"kind":"summaries","resource":"body","user_id":"u7","provider":"withings"})",
                                R"({"body":[{"id":"b1","weight":70.5}]})");
  BOOST_TEST(r.error == "");
  BOOST_TEST(text(rows.summaries.at(0).user_id) == "u7");
  BOOST_TEST(text(rows.summaries.at(0).provider) == "withings");
  BOOST_TEST(rows.summaries.at(0).data_json == R"({"id":"b1","weight":70.5})");
}

BOOST_AUTO_TEST_CASE(summaries_page_errors) {
  BOOST_TEST(fetched(R"({"kind":"summaries","resource":"sleep","user_id":"u"})", R"({"activity":[]})").error ==
             "sleep: missing (the page has no array for its resource)");
  BOOST_TEST(fetched(R"({"kind":"summaries","resource":"sleep","user_id":"u"})", R"({"sleep":[{"id":"a"},{"x":1}]})").error ==
             "sleep[1].id: missing");  // a summaries page holds summaries only
  // The resource may come from the event type alone.
  const ParseResult r = fetched(R"({"kind":"summaries","user_id":"u"})", R"({"meal":[{"id":"m1"}]})", "fetch.summaries.meal");
  BOOST_TEST(r.error == "");
  BOOST_TEST(rows.summaries.at(0).resource == "meal");
}

BOOST_AUTO_TEST_CASE(grouped_timeseries_page) {
  const ParseResult r = fetched_example("fetched-timeseries-page");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::fetched_timeseries));
  BOOST_REQUIRE(rows.sample_batches.size() == 2u);
  const SampleBatch& watch = rows.sample_batches[0];
  BOOST_TEST(watch.user_id == "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44");
  BOOST_TEST(watch.resource == "heartrate");
  BOOST_TEST(watch.provider == "garmin");
  BOOST_TEST(watch.source_type == "watch");
  BOOST_REQUIRE(watch.samples.size() == 2u);
  BOOST_TEST(watch.samples[0].t_ms == 1722751200000);
  BOOST_TEST(std::get<int64_t>(watch.samples[1].value) == 61);
  const SampleBatch& strap = rows.sample_batches[1];
  BOOST_TEST(strap.source_type == "chest_strap");
  BOOST_REQUIRE(strap.samples.size() == 1u);
  BOOST_TEST(strap.samples[0].t_ms == 1722755400000);
}

BOOST_AUTO_TEST_CASE(grouped_page_provider_and_errors) {
  // No source.provider: the group key names the provider.
  ParseResult r = fetched(R"({"kind":"timeseries","resource":"steps","user_id":"u"})",
                          R"({"groups":{"oura":[{"source":{"type":"ring"},"data":[{"timestamp":"2024-01-01T00:00:00Z","value":3}]},
                                                {"source":{"type":"app"},"data":[]}]},"next_cursor":null})");
  BOOST_TEST(r.error == "");
  BOOST_REQUIRE(rows.sample_batches.size() == 1u);  // the empty group adds no batch
  BOOST_TEST(rows.sample_batches[0].provider == "oura");
  BOOST_TEST(rows.sample_batches[0].source_type == "ring");

  r = fetched(R"({"kind":"timeseries","resource":"steps","user_id":"u"})",
              R"({"groups":{"oura":[{"data":[{"timestamp":"2024-01-01T00:00:00Z","value":3}]},{"data":[{"timestamp":"bad"}]}]}})");
  BOOST_TEST(r.error == R"(groups.oura[1].data[0].timestamp: not an ISO 8601 time "bad")");
  BOOST_TEST(rows.sample_batches.empty());

  BOOST_TEST(fetched(R"({"kind":"timeseries","resource":"steps","user_id":"u"})", R"({"next_cursor":null})").error ==
             "groups: missing");
  BOOST_TEST(fetched(R"({"kind":"timeseries","resource":"steps"})", R"({"groups":{}})").error ==
             "fetch context.user_id: missing");
}

BOOST_AUTO_TEST_CASE(workouts_for_streams) {
  const ParseResult r = fetched_example("fetched-workouts-page");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::fetched_summaries));
  BOOST_REQUIRE(rows.workout_ids_to_fetch.size() == 2u);
  BOOST_TEST(rows.workout_ids_to_fetch[0] == "c90bd6fb-7a4f-4a5e-9a8b-3f0f5f1f2b61");
  BOOST_TEST(rows.workout_ids_to_fetch[1] == "d01ce7a8-8b5f-4b6f-9b9c-4a1a6a2a3c72");
  BOOST_REQUIRE(rows.summaries.size() == 2u);
  BOOST_TEST(rows.summaries[0].resource == "workouts");
  BOOST_TEST(rows.summaries[1].start_ms.value_or(-1) == 1717434000000);
  BOOST_TEST(text(rows.summaries[1].provider) == "zwift");
  // What the workout's stream row is given (its provider id and sport's slug).
  BOOST_TEST(text(rows.summaries[0].provider_id) == "51278201336");
  BOOST_TEST(text(rows.summaries[1].provider_id) == "51278209911");
  BOOST_TEST(text(rows.summaries[1].sport) == "cycling");
}

// Reference notes §3.1: the meal endpoint's list is "meals", not "meal".
BOOST_AUTO_TEST_CASE(meals_page_reads_the_list_under_meals) {
  const ParseResult r = fetched_example("fetched-meals-page");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::fetched_summaries));
  BOOST_REQUIRE(rows.summaries.size() == 1u);
  BOOST_TEST(rows.summaries[0].resource == "meal");
  BOOST_TEST(rows.summaries[0].id == "d1c6b4a2-3e5f-4a7b-8c9d-0e1f2a3b4c5d");
  BOOST_TEST(text(rows.summaries[0].provider) == "myfitnesspal");
  BOOST_TEST(rows.summaries[0].start_ms.value_or(-1) == 1709659860000);  // 2024-03-05T12:31:00-05:00
  // Without items_key the list is looked for under the resource's name, and not found.
  const std::string context = read_example("fetched-meals-page.context.json");
  const std::string without = context.substr(0, context.find(R"("items_key")")) +
                              context.substr(context.find(R"("user_id")"));
  const ParseResult missing = fetched(without, read_example("fetched-meals-page.body.json"));
  BOOST_TEST((missing.status == Status::invalid));
  BOOST_TEST(missing.error == "meal: missing (the page has no array for its resource)");
}

// Reference notes §3.1: the profile endpoint answers one object, not a list.
BOOST_AUTO_TEST_CASE(profile_is_one_object) {
  const ParseResult r = fetched_example("fetched-profile");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::fetched_summaries));
  BOOST_REQUIRE(rows.summaries.size() == 1u);
  BOOST_TEST(rows.summaries[0].resource == "profile");
  BOOST_TEST(rows.summaries[0].id == "9b2f0e4c-1d3a-4c5b-8e7f-6a5b4c3d2e1f");
  BOOST_TEST(text(rows.summaries[0].user_id) == "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10");
  BOOST_TEST(text(rows.summaries[0].provider) == "fitbit");
  BOOST_TEST(rows.summaries[0].data_json == body.substr(0, body.rfind('}') + 1));
  const std::string context = read_example("fetched-profile.context.json");
  BOOST_TEST(fetched(context, R"([{"id":"x"}])").error == "body: expected an object, got an array");
  BOOST_TEST(fetched(context, R"({"height":170})").error == "body.id: missing");
  BOOST_TEST(fetched(R"({"kind":"summary"})", "{}").error == "fetch context.resource: missing");
}

BOOST_AUTO_TEST_CASE(provider_list) {
  const ParseResult r = fetched_example("fetched-providers");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.status == Status::processed));
  BOOST_TEST((r.family == Family::fetched_providers));
  BOOST_REQUIRE(rows.providers.size() == 3u);
  BOOST_TEST(rows.providers[0].slug == "apple_health_kit");
  BOOST_TEST(text(rows.providers[0].name) == "Apple HealthKit");
  BOOST_TEST(text(rows.providers[0].logo) == "https://storage.googleapis.com/vital-assets/apple_health.png");
  BOOST_TEST(text(rows.providers[0].auth_type) == "sdk");
  BOOST_TEST(text(rows.providers[0].supported_resources_json) ==
             R"(["activity", "sleep", "workouts", "steps", "heartrate", "meal", "water"])");
  BOOST_TEST(text(rows.providers[2].logo) == "<null>");
  BOOST_TEST(text(rows.providers[2].supported_resources_json) == "<null>");
  const std::string context = read_example("fetched-providers.context.json");
  BOOST_TEST(fetched(context, R"({"providers":[]})").error == "body: not a JSON array");
  BOOST_TEST(fetched(context, R"([{"name":"x"}])").error == "providers[0].slug: missing");
  BOOST_TEST(fetched(context, "[]").error == "");
  BOOST_TEST(rows.providers.empty());
}

BOOST_AUTO_TEST_CASE(fetched_rows_name_no_user_identity) {
  BOOST_TEST(fetched_example("fetched-summaries-page").error == "");
  BOOST_TEST(!rows.identity.user_id.has_value());
}

BOOST_AUTO_TEST_CASE(context_errors) {
  BOOST_TEST(fetched(R"({"kind":"mystery"})", "{}").error == R"(fetch context.kind: unknown kind "mystery")");
  BOOST_TEST(fetched(R"({"url":"x"})", "{}").error == R"(fetch context.kind: unknown kind "")");
  BOOST_TEST(fetched("not json", "{}").error == "fetch context: not JSON (unexpected character at byte 0)");
  BOOST_TEST(fetched("[1]", "{}").error == "fetch context: not a JSON object");
  BOOST_TEST(fetched(R"({"kind":)", "{}").error.substr(0, 30) == "fetch context: not valid JSON ");
  BOOST_TEST(fetched(R"({"kind":"summaries","user_id":"u"})", "{}", "fetch").error == "fetch context.resource: missing");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // fetched_pages_test

}  // namespace hh::events
