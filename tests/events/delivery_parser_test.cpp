// DeliveryParser on every webhook example of schemas/examples/, with literal expectations,
// plus the classification rules and the required-field errors.
#include <boost/test/unit_test.hpp>

#include <string>

#include "fixtures.h"
#include "common/timestamp.h"
#include "events/classify.h"

namespace hh::events {

BOOST_AUTO_TEST_SUITE(delivery_parser_test)

namespace {

using test::ParserFixture;
using test::read_example;

std::string text(std::optional<std::string_view> value) { return value ? std::string(*value) : "<null>"; }
std::string as_string(const SampleValue& v) {
  if (auto s = std::get_if<std::string_view>(&v)) return std::string(*s);
  return "<not a string>";
}
bool is_null(const SampleValue& v) { return std::holds_alternative<std::monostate>(v); }
int64_t as_int(const SampleValue& v) { return std::get<int64_t>(v); }
double as_double(const SampleValue& v) { return std::get<double>(v); }

std::string replace(std::string body, std::string_view from, std::string_view to) {
  const size_t at = body.find(from);
  if (at == std::string::npos) throw std::runtime_error("fixture text not found: " + std::string(from));
  body.replace(at, from.size(), to);
  return body;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(classification)

BOOST_AUTO_TEST_CASE(event_types_map_to_kinds) {
  BOOST_TEST(classify_event_type("daily.data.sleep.created").resource == "sleep");
  BOOST_TEST((classify_event_type("daily.data.sleep.updated").kind == EventKind::resource_data));
  BOOST_TEST(classify_event_type("historical.data.heartrate.created").historical);
  BOOST_TEST((classify_event_type("historical.data.heartrate.updated").kind == EventKind::other));
  BOOST_TEST((classify_event_type("daily.data.hypnogram.created").kind == EventKind::hypnogram));
  BOOST_TEST((classify_event_type("daily.timeseries.hypnogram.updated").kind == EventKind::hypnogram));
  BOOST_TEST((classify_event_type("historical.timeseries.hypnogram.created").kind == EventKind::hypnogram));
  BOOST_TEST((classify_event_type("provider.connection.created").kind == EventKind::connection_created));
  BOOST_TEST((classify_event_type("provider.connection.error").kind == EventKind::connection_error));
  BOOST_TEST((classify_event_type("provider.connection.deleted").kind == EventKind::other));
  BOOST_TEST((classify_event_type("provider.device.updated").kind == EventKind::device));
  BOOST_TEST((classify_event_type("labtest.order.created").kind == EventKind::lab_order));
  BOOST_TEST((classify_event_type("labtest.appointment.updated").kind == EventKind::lab_appointment));
  BOOST_TEST((classify_event_type("labtest.result.critical").kind == EventKind::lab_result));
  BOOST_TEST((classify_event_type("labtest.match_review.created").kind == EventKind::unshown_resource));
  BOOST_TEST((classify_event_type("lab_report.parsing_job.updated").kind == EventKind::lab_parsing_job));
  BOOST_TEST((classify_event_type("continuous_query.result_table.changed").kind == EventKind::other));
  BOOST_TEST((classify_event_type("ping").kind == EventKind::other));
  BOOST_TEST((classify_event_type("").kind == EventKind::other));
  BOOST_TEST((classify_event_type("daily.data..created").kind == EventKind::other));
}

BOOST_AUTO_TEST_CASE(names_match_the_schema) {
  BOOST_TEST(family_name(Family::lab_parsing_job) == "lab_parsing_job");
  BOOST_TEST(family_name(Family::fetched_timeseries) == "fetched_timeseries");
  BOOST_TEST(status_name(Status::ignored) == "ignored");
  BOOST_TEST(status_name(Status::unknown) == "unknown");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(summaries, ParserFixture)

BOOST_AUTO_TEST_CASE(sleep) {
  const ParseResult r = example("summary-sleep.json", "daily.data.sleep.created");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.status == Status::processed));
  BOOST_TEST((r.family == Family::summary));
  BOOST_REQUIRE(rows.summaries.size() == 1u);
  const SummaryRow& s = rows.summaries[0];
  BOOST_TEST(s.resource == "sleep");
  BOOST_TEST(s.id == "5b1c8d0a-6f1e-4a43-9d3c-2f6c2b9e7a11");
  BOOST_TEST(text(s.user_id) == "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2");
  BOOST_TEST(text(s.provider) == "oura");
  BOOST_TEST(s.source_type == "ring");
  BOOST_TEST(text(s.calendar_date) == "2023-05-17");
  BOOST_TEST(s.start_ms.value_or(-1) == 1684275000000);  // 2023-05-16T23:10:00+01:00
  BOOST_TEST(s.end_ms.value_or(-1) == 1684303350000);
  // The stored JSON is $.data exactly as sent.
  const size_t start = body.find("{\n    \"id\": \"5b1c8d0a");
  const size_t end = body.find("\n  },\n  \"user_id\"") + 4;
  BOOST_TEST(s.data_json == std::string_view(body).substr(start, end - start));
  BOOST_TEST(rows.sample_batches.empty());
}

BOOST_AUTO_TEST_CASE(activity_old_source_form_with_event_type_after_data) {
  // The inbox had no event_type and the body puts `data` first (the docs' own example).
  const ParseResult r = example("summary-activity-old-source.json");
  BOOST_TEST(r.error == "");
  BOOST_REQUIRE(rows.summaries.size() == 1u);
  const SummaryRow& s = rows.summaries[0];
  BOOST_TEST(s.resource == "activity");
  BOOST_TEST(s.id == "715dd6a5-0c67-471c-b5fe-9681a980a2c2");
  BOOST_TEST(text(s.provider) == "apple_health_kit");  // from the deprecated slug
  BOOST_TEST(s.source_type == "unknown");
  BOOST_TEST(s.start_ms.value_or(-1) == 1684281600000);  // `date`, start of day
  BOOST_TEST(!s.end_ms);
}

BOOST_AUTO_TEST_CASE(old_and_new_source_forms_give_the_same_provider) {
  BOOST_TEST(example("summary-activity-old-source.json").error == "");
  const std::string old_provider = text(rows.summaries.at(0).provider);
  BOOST_TEST(example("summary-activity.json").error == "");
  BOOST_TEST(text(rows.summaries.at(0).provider) == old_provider);
  BOOST_TEST(old_provider == "apple_health_kit");
  BOOST_TEST(rows.summaries.at(0).source_type == "watch");
}

BOOST_AUTO_TEST_CASE(workouts) {
  BOOST_TEST(example("summary-workouts.json").error == "");
  const SummaryRow& s = rows.summaries.at(0);
  BOOST_TEST(s.resource == "workouts");
  BOOST_TEST(s.id == "c90bd6fb-7a4f-4a5e-9a8b-3f0f5f1f2b61");
  BOOST_TEST(text(s.provider) == "zwift");
  BOOST_TEST(s.source_type == "unknown");
  BOOST_TEST(text(s.calendar_date) == "2024-06-02");
  BOOST_TEST(s.start_ms.value_or(-1) == 1717305300000);
  BOOST_TEST(s.end_ms.value_or(-1) == 1717310730000);
}

BOOST_AUTO_TEST_CASE(body_profile_meal) {
  BOOST_TEST(example("summary-body.json").error == "");
  BOOST_TEST(text(rows.summaries.at(0).provider) == "withings");
  BOOST_TEST(rows.summaries.at(0).source_type == "scale");
  BOOST_TEST(rows.summaries.at(0).start_ms.value_or(-1) == 1707609600000);

  BOOST_TEST(example("summary-profile.json").error == "");
  BOOST_TEST(rows.summaries.at(0).resource == "profile");
  BOOST_TEST(rows.summaries.at(0).id == "9b2f0e4c-1d3a-4c5b-8e7f-6a5b4c3d2e1f");
  BOOST_TEST(text(rows.summaries.at(0).provider) == "fitbit");
  BOOST_TEST(!rows.summaries.at(0).start_ms);
  BOOST_TEST(!rows.summaries.at(0).calendar_date);

  // meal has an object at `data`: still a summary, not samples.
  const ParseResult meal = example("summary-meal.json");
  BOOST_TEST(meal.error == "");
  BOOST_TEST((meal.family == Family::summary));
  BOOST_TEST(rows.summaries.at(0).start_ms.value_or(-1) == 1709659860000);  // timestamp, -05:00
  BOOST_TEST(text(rows.summaries.at(0).provider) == "myfitnesspal");
  BOOST_TEST(rows.summaries.at(0).source_type == "app");
  BOOST_TEST(rows.sample_batches.empty());

  // Its resource decides, not its members: a meal whose `data` member is an array (empty,
  // or of items) is the meal's summary; it was read as samples, `[]` storing nothing
  // (black-box pass).
  // In a historical event too (attack, stop 82: `historical.data.meal.created` with `[]` was
  // "processed" with nothing stored, with items invalid as samples without a timestamp).
  for (const std::string event : {"daily.data.meal.created", "historical.data.meal.created"}) {
    for (const std::string& inner : {std::string("[]"), std::string(R"([{"name":"apple","energy":{"value":52}}])")}) {
      const ParseResult listed = webhook(
          R"({"event_type":")" + event + R"(","user_id":"u1","data":{"id":"m1","user_id":"u1","name":"Lunch",)"
          R"("timestamp":"2024-03-05T12:00:00+00:00","source":{"provider":"myfitnesspal","type":"app"},"data":)" +
          inner + "}}");
      BOOST_TEST(listed.error == "", event << inner);
      BOOST_TEST((listed.family == Family::summary), event << inner);
      BOOST_TEST(rows.summaries.size() == 1u, event << inner);
      BOOST_TEST(rows.sample_batches.empty(), event << inner);
    }
  }
  // A resource the catalog does not know, with an id and an empty `data` array: a summary
  // of a new kind, not an empty batch.
  const ParseResult new_kind = webhook(
      R"({"event_type":"daily.data.nutrition_log.created","user_id":"u1","data":{"id":"n1","user_id":"u1",)"
      R"("source":{"provider":"cronometer","type":"app"},"data":[]}})");
  BOOST_TEST(new_kind.error == "");
  BOOST_TEST((new_kind.family == Family::summary));
  BOOST_TEST(rows.summaries.size() == 1u);
  BOOST_TEST(rows.sample_batches.empty());
  // A historical notice of a summary resource is still a backfill notice.
  const ParseResult notice = webhook(
      R"({"event_type":"historical.data.meal.created","user_id":"u1","data":{"user_id":"u1",)"
      R"("start_date":"2024-03-01T00:00:00+00:00","end_date":"2024-03-05T00:00:00+00:00","provider":"myfitnesspal"}})");
  BOOST_TEST(notice.error == "");
  BOOST_TEST((notice.family == Family::backfill));
  // A summary event without an id is still invalid, naming it.
  BOOST_TEST(webhook(R"({"event_type":"daily.data.sleep.created","data":{"data":[]}})").error.find("id") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(flat_source_fields) {
  BOOST_TEST(example("summary-sleep-cycle.json").error == "");
  BOOST_TEST(text(rows.summaries.at(0).provider) == "oura");
  BOOST_TEST(rows.summaries.at(0).source_type == "ring");
  BOOST_TEST(rows.summaries.at(0).start_ms.value_or(-1) == 1684275000000);
  BOOST_TEST(rows.summaries.at(0).end_ms.value_or(-1) == 1684303350000);

  // menstrual_cycle has no `source` object here: the flat fields are used.
  BOOST_TEST(example("summary-menstrual-cycle.json").error == "");
  BOOST_TEST(text(rows.summaries.at(0).provider) == "apple_health_kit");
  BOOST_TEST(rows.summaries.at(0).source_type == "phone");
  BOOST_TEST(rows.summaries.at(0).start_ms.value_or(-1) == 1712016000000);
  BOOST_TEST(rows.summaries.at(0).end_ms.value_or(-1) == 1712361600000);

  BOOST_TEST(example("summary-electrocardiogram.json").error == "");
  BOOST_TEST(rows.summaries.at(0).resource == "electrocardiogram");
  BOOST_TEST(rows.summaries.at(0).source_type == "watch");
  BOOST_TEST(rows.summaries.at(0).start_ms.value_or(-1) == 1716196443250);
  BOOST_TEST(rows.summaries.at(0).end_ms.value_or(-1) == 1716196473250);
}

BOOST_AUTO_TEST_CASE(compact_data_json_and_envelope_user) {
  const ParseResult r = webhook(R"({"event_type":"daily.data.sleep.created","data":{"id":"s1","x":[1, 2],"bedtime_start":"nonsense"}  ,"user_id":"u-9"})");
  BOOST_TEST(r.error == "");
  const SummaryRow& s = rows.summaries.at(0);
  BOOST_TEST(s.data_json == R"({"id":"s1","x":[1, 2],"bedtime_start":"nonsense"})");
  BOOST_TEST(text(s.user_id) == "u-9");       // data has none: the envelope's
  BOOST_TEST(!s.provider);                     // no source at all: null, still processed
  BOOST_TEST(s.source_type == "unknown");
  BOOST_TEST(!s.start_ms);                     // unparsable time: null, never invalid
}

BOOST_AUTO_TEST_CASE(unknown_enum_values_are_kept) {
  std::string body = read_example("summary-sleep.json");
  body = replace(body, R"("type": "long_sleep")", R"("type": "polyphasic_block")");
  body = replace(body, R"("type": "ring")", R"("type": "smart_mattress")");
  BOOST_TEST(webhook(body).error == "");
  BOOST_TEST(rows.summaries.at(0).source_type == "smart_mattress");
  BOOST_TEST(rows.summaries.at(0).data_json.find(R"("type": "polyphasic_block")") != std::string_view::npos);
}

// A summary resource's event is a summary whatever its data holds: an invalid one too is
// of family summary, and its error names the field (it was `other`, "a summary needs an
// id, a timeseries a data[] array").
BOOST_AUTO_TEST_CASE(missing_id_is_invalid) {
  const ParseResult r = webhook(R"({"event_type":"daily.data.sleep.created","data":{"user_id":"u","source":{"provider":"oura"}}})");
  BOOST_TEST((r.status == Status::invalid));
  BOOST_TEST((r.family == Family::summary));
  BOOST_TEST(r.error == "data.id: missing");
  BOOST_TEST(rows.summaries.empty());
  const ParseResult no_data = webhook(R"({"event_type":"daily.data.meal.created","user_id":"u"})");
  BOOST_TEST((no_data.family == Family::summary));
  BOOST_TEST(no_data.error == "data: missing");
  const ParseResult array_data = webhook(R"({"event_type":"daily.data.workouts.updated","data":[{"id":"w"}]})");
  BOOST_TEST((array_data.family == Family::summary));
  BOOST_TEST(array_data.error == "data: expected an object, got an array");
}

// An id is a string or a number (123 and "123" name one row): `"id":true` was stored as a
// summary named "true", an object or array id as its JSON text (black-box pass, read API).
// Now the delivery is invalid, with the reason, as a missing id makes it.
BOOST_AUTO_TEST_CASE(an_id_that_is_no_string_or_number_is_invalid) {
  const std::string sleep = R"({"event_type":"daily.data.sleep.created","data":{"id":ID,"user_id":"u","source":{"provider":"oura"}}})";
  for (const auto& [id, type] : std::vector<std::pair<std::string, std::string>>{
           {"true", "a boolean"}, {"false", "a boolean"}, {R"({"a":1})", "an object"}, {"[1]", "an array"}}) {
    const ParseResult r = webhook(replace(sleep, "ID", id));
    BOOST_TEST((r.status == Status::invalid), id);
    BOOST_TEST(r.error == "data.id: must be a string or a number, got " + type, id);
    BOOST_TEST(rows.summaries.empty(), id);
  }
  const ParseResult number = webhook(replace(sleep, "ID", "123"));
  BOOST_TEST(number.error == "");
  BOOST_REQUIRE_EQUAL(rows.summaries.size(), 1u);
  BOOST_TEST(rows.summaries[0].id == "123");
  BOOST_TEST(webhook(replace(sleep, "ID", R"("123")")).error == "");
  BOOST_TEST(webhook(R"({"event_type":"provider.device.updated","data":{"id":true,"user_id":"u"}})").error ==
             "data.id: must be a string or a number, got a boolean");
  BOOST_TEST(webhook(R"({"event_type":"labtest.order.updated","data":{"id":false,"user_id":"u","status":"received"}})")
                 .error == "data.id: must be a string or a number, got a boolean");
}

// The other id fields go through the same check as `id`: a boolean user_id (order_id,
// workout_id, device_id, …) was stored as the id "true", an object as its JSON text. A
// number is kept as written and null or absent stays as before.
BOOST_AUTO_TEST_CASE(an_id_like_field_that_is_no_string_or_number_is_invalid) {
  struct Case {
    std::string body;
    std::string error;
  };
  const std::string sleep_data = R"("data":{"id":"s1","user_id":"u","source":{"provider":"oura"}})";
  const std::vector<Case> cases{
      {R"({"event_type":"daily.data.sleep.created","user_id":true,"data":{"id":"s1","user_id":true,"source":{"provider":"oura"}}})",
       "user_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"daily.data.sleep.created","data":{"id":"s1","user_id":true,"source":{"provider":"oura"}}})",
       "data.user_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"daily.data.sleep.created","data":{"id":"s1","user_id":{"a":1},"source":{"provider":"oura"}}})",
       "data.user_id: must be a string or a number, got an object"},
      {R"({"event_type":"daily.data.steps.created","data":{"user_id":false,"source":{"provider":"oura"},"data":[]}})",
       "data.user_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"daily.data.workout_stream.created","data":{"workout_id":true,"user_id":"u","provider_id":"p","source":{"provider":"fitbit"}}})",
       "data.workout_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"daily.data.workout_stream.created","data":{"workout_id":"w","user_id":"u","provider_id":[1],"source":{"provider":"fitbit"}}})",
       "data.provider_id: must be a string or a number, got an array"},
      {R"({"event_type":"provider.device.updated","data":{"id":"d","user_id":true}})",
       "data.user_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"provider.device.updated","data":{"id":"d","user_id":"u","device_id":true}})",
       "data.device_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"provider.connection.created","data":{"user_id":true,"provider":"oura"}})",
       "data.user_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"provider.connection.created","data":{"user_id":"u","provider":"oura","external_user_id":true}})",
       "data.external_user_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"labtest.order.updated","data":{"id":"o","user_id":true,"status":"received"}})",
       "data.user_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"labtest.order.updated","data":{"id":"o","user_id":"u","team_id":true,"status":"received"}})",
       "data.team_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"labtest.appointment.updated","data":{"id":"a","user_id":"u","order_id":true}})",
       "data.order_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"labtest.result.critical","data":{"order_id":true,"user_id":"u"}})",
       "data.order_id: must be a string or a number, got a boolean"},
      {R"({"event_type":"labtest.result.critical","data":{"order_id":"o","user_id":"u","sample_id":false}})",
       "data.sample_id: must be a string or a number, got a boolean"},
  };
  for (const Case& c : cases) {
    const ParseResult r = webhook(c.body);
    BOOST_TEST((r.status == Status::invalid), c.body);
    BOOST_TEST(r.error == c.error, c.body);
  }
  // A number is an id kept as written; null stays allowed where it was.
  BOOST_TEST(webhook(R"({"event_type":"daily.data.sleep.created","user_id":42,"data":{"id":"s1","user_id":42,"source":{"provider":"oura"}}})")
                 .error == "");
  BOOST_REQUIRE_EQUAL(rows.summaries.size(), 1u);
  BOOST_TEST(text(rows.summaries[0].user_id) == "42");
  BOOST_TEST(webhook(R"({"event_type":"labtest.result.critical","data":{"order_id":"o","user_id":"u","sample_id":null}})")
                 .error == "");
  BOOST_TEST(webhook(R"({"event_type":"provider.connection.created","data":{"user_id":"u","provider":"oura","external_user_id":null}})")
                 .error == "");
  // The fetch context's ids too.
  const ParseResult fetched = this->fetched(R"({"kind":"parsing_job","job_id":true,"url":"https://x"})", R"({"id":"j1"})");
  BOOST_TEST((fetched.status == Status::invalid));
  BOOST_TEST(fetched.error.starts_with("fetch context.job_id: "), fetched.error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(timeseries, ParserFixture)

BOOST_AUTO_TEST_CASE(heartrate) {
  const ParseResult r = example("timeseries-heartrate.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::timeseries));
  BOOST_REQUIRE(rows.sample_batches.size() == 1u);
  const SampleBatch& b = rows.sample_batches[0];
  BOOST_TEST(b.user_id == "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44");
  BOOST_TEST(b.resource == "heartrate");
  BOOST_TEST(b.provider == "garmin");
  BOOST_TEST(b.source_type == "watch");
  BOOST_REQUIRE(b.samples.size() == 3u);
  BOOST_TEST(b.samples[0].t_ms == 1717305300000);
  BOOST_TEST(b.samples[1].t_ms == 1717305305000);
  BOOST_TEST(b.samples[2].t_ms == 1717305310250);
  BOOST_TEST(as_int(b.samples[0].value) == 92);
  BOOST_TEST(as_double(b.samples[1].value) == 97.5);
  BOOST_TEST(as_int(b.samples[2].value) == 101);
  BOOST_TEST(b.samples[0].timezone_offset.value_or(-1) == 7200);
  BOOST_TEST(!b.samples[2].timezone_offset);
  BOOST_TEST(text(b.samples[0].unit) == "bpm");
  BOOST_TEST(!b.samples[0].type);
  BOOST_TEST(!b.samples[0].start_ms);
  BOOST_TEST(b.samples[0].extra_json == R"({"id":9001})");
  BOOST_TEST(b.samples[2].extra_json == R"({"id":null})");
}

BOOST_AUTO_TEST_CASE(offsets_name_the_same_instant) {
  BOOST_TEST(webhook(R"({"event_type":"daily.data.heartrate.created","user_id":"u","data":{"source":{"provider":"p"},
      "data":[{"timestamp":"2024-06-02T11:00:00+01:00","value":1},{"timestamp":"2024-06-02T10:00:00Z","value":2},
              {"timestamp":"2024-06-02T05:30:00-04:30","value":3}]}})").error == "");
  const auto& samples = rows.sample_batches.at(0).samples;
  BOOST_TEST(samples.at(0).t_ms == 1717322400000);
  BOOST_TEST(samples.at(1).t_ms == 1717322400000);
  BOOST_TEST(samples.at(2).t_ms == 1717322400000);
}

BOOST_AUTO_TEST_CASE(interval_samples_keep_start_and_end) {
  BOOST_TEST(example("timeseries-steps.json").error == "");
  const SampleBatch& b = rows.sample_batches.at(0);
  BOOST_TEST(b.provider == "apple_health_kit");
  BOOST_TEST(b.source_type == "watch");
  BOOST_REQUIRE(b.samples.size() == 2u);
  BOOST_TEST(b.samples[0].t_ms == 1684231200000);
  BOOST_TEST(b.samples[0].start_ms.value_or(-1) == 1684231200000);
  BOOST_TEST(b.samples[0].end_ms.value_or(-1) == 1684234800000);
  BOOST_TEST(b.samples[1].end_ms.value_or(-1) == 1684238400000);
  BOOST_TEST(as_int(b.samples[1].value) == 451);
  BOOST_TEST(b.samples[0].extra_json == "");

  // A sample with only start/end (no deprecated timestamp) is keyed by start.
  BOOST_TEST(webhook(R"({"event_type":"daily.data.steps.created","user_id":"u","data":{"source":{"provider":"p"},
      "data":[{"start":"2023-05-16T10:00:00Z","end":"2023-05-16T11:00:00Z","value":7}]}})").error == "");
  BOOST_TEST(rows.sample_batches.at(0).samples.at(0).t_ms == 1684231200000);
  BOOST_TEST(rows.sample_batches.at(0).samples.at(0).end_ms.value_or(-1) == 1684234800000);
}

BOOST_AUTO_TEST_CASE(old_source_form_gives_the_same_keys) {
  BOOST_TEST(example("timeseries-steps-old-source.json").error == "");
  const SampleBatch& b = rows.sample_batches.at(0);
  BOOST_TEST(b.provider == "apple_health_kit");
  BOOST_TEST(b.source_type == "unknown");  // the old form has no type
  BOOST_TEST(b.samples.at(0).t_ms == 1684231200000);
  BOOST_TEST(b.samples.at(1).t_ms == 1684234800000);
  BOOST_TEST(b.samples.at(0).timezone_offset.value_or(-1) == 3600);
}

BOOST_AUTO_TEST_CASE(glucose_keeps_integer_and_float) {
  BOOST_TEST(example("timeseries-glucose.json").error == "");
  const SampleBatch& b = rows.sample_batches.at(0);
  BOOST_TEST(b.provider == "freestyle_libre");
  BOOST_TEST(b.source_type == "automatic");
  BOOST_TEST(as_double(b.samples.at(0).value) == 5.4);
  BOOST_TEST(as_double(b.samples.at(1).value) == 5.75);
  BOOST_TEST(as_int(b.samples.at(2).value) == 6);
  BOOST_TEST(text(b.samples.at(2).unit) == "mmol/L");
}

BOOST_AUTO_TEST_CASE(blood_pressure) {
  BOOST_TEST(example("timeseries-blood-pressure.json").error == "");
  const SampleBatch& b = rows.sample_batches.at(0);
  BOOST_TEST(b.user_id == "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10");  // only in the envelope
  BOOST_TEST(b.provider == "omron");
  BOOST_TEST(b.source_type == "cuff");
  BOOST_TEST(b.samples.at(0).t_ms == 1706790600000);
  BOOST_TEST(b.samples.at(0).systolic.value_or(-1) == 121.0);
  BOOST_TEST(b.samples.at(0).diastolic.value_or(-1) == 79.5);
  BOOST_TEST(is_null(b.samples.at(0).value));
  BOOST_TEST(b.samples.at(0).extra_json == R"({"id":null,"grouping":{"reading_id": "r-1"}})");
  BOOST_TEST(b.samples.at(1).t_ms == 1706834700000);
  BOOST_TEST(b.samples.at(1).systolic.value_or(-1) == 118.0);
  BOOST_TEST(b.samples.at(1).extra_json == R"({"id":null})");
}

BOOST_AUTO_TEST_CASE(cholesterol_types_including_an_unknown_one) {
  BOOST_TEST(example("timeseries-cholesterol.json").error == "");
  const SampleBatch& b = rows.sample_batches.at(0);
  BOOST_TEST(text(b.samples.at(0).type) == "ldl");
  BOOST_TEST(text(b.samples.at(1).type) == "total");
  BOOST_TEST(text(b.samples.at(2).type) == "remnant_ultra");
  BOOST_TEST(b.source_type == "lab");
}

BOOST_AUTO_TEST_CASE(extra_fields_keep_their_raw_json) {
  BOOST_TEST(example("timeseries-extra-fields.json").error == "");
  const SampleRow& s = rows.sample_batches.at(0).samples.at(0);
  BOOST_TEST(as_string(s.value) == "Felt dizzy after run");
  BOOST_TEST(s.extra_json == R"({"id":null,"tags":["symptom", "running"],"sensor_location":null})");
  BOOST_TEST(s.t_ms == 1719860400000);
  BOOST_TEST(s.start_ms.value_or(-1) == 1719860400000);
  BOOST_TEST(s.end_ms.value_or(-1) == 1719860400000);
}

BOOST_AUTO_TEST_CASE(escaped_member_names) {
  // Names are compared unescaped: "time\u0073tamp" is "timestamp".
  BOOST_TEST(webhook(R"({"event_type":"daily.data.heartrate.created","user_id":"u","data":{"source":{"provider":"p"},
      "data":[{"time\u0073tamp":"2024-06-02T10:00:00Z","value":1,"no\"te":"x"}]}})").error == "");
  const SampleRow& s = rows.sample_batches.at(0).samples.at(0);
  BOOST_TEST(s.t_ms == 1717322400000);
  BOOST_TEST(s.extra_json == R"({"no\"te":"x"})");
}

BOOST_AUTO_TEST_CASE(bad_timestamp_names_the_sample) {
  std::string body = read_example("timeseries-heartrate.json");
  body = replace(body, R"("timestamp": "2024-06-02T05:15:05Z")", R"("timestamp": "x")");
  const ParseResult r = webhook(body);
  BOOST_TEST((r.status == Status::invalid));
  BOOST_TEST((r.family == Family::timeseries));
  BOOST_TEST(r.error == R"(data.data[1].timestamp: not an ISO 8601 time "x")");
  BOOST_TEST(rows.sample_batches.empty());  // nothing half-applied
  // An offset that carries the instant past the years RFC 3339 writes in UTC: refused (it
  // could not be written back), and the edges themselves kept.
  for (const char* beyond : {"9999-12-31T23:00:00-05:00", "0000-01-01T00:30:00+01:00"}) {
    const ParseResult out = webhook(replace(read_example("timeseries-heartrate.json"),
                                            R"("timestamp": "2024-06-02T05:15:05Z")",
                                            std::string(R"("timestamp": ")") + beyond + "\""));
    BOOST_TEST(out.error == std::string(R"(data.data[1].timestamp: not an ISO 8601 time ")") + beyond + "\"");
  }
  BOOST_TEST(format_rfc3339_ms(*parse_iso8601_ms("9999-12-31T23:59:59.999Z")) == "9999-12-31T23:59:59.999Z");
  BOOST_TEST(format_rfc3339_ms(*parse_iso8601_ms("0000-01-01T00:00:00Z")) == "0000-01-01T00:00:00.000Z");
}

BOOST_AUTO_TEST_CASE(missing_time_and_provider) {
  ParseResult r = webhook(R"({"event_type":"daily.data.heartrate.created","user_id":"u","data":{"source":{"provider":"p"},
      "data":[{"timestamp":"2024-06-02T10:00:00Z","value":1},{"value":2}]}})");
  BOOST_TEST(r.error == "data.data[1].timestamp: missing (neither timestamp nor start)");
  r = webhook(R"({"event_type":"daily.data.heartrate.created","user_id":"u","data":{"source":{"name":"X","type":"watch"},
      "data":[{"timestamp":"2024-06-02T10:00:00Z","value":1}]}})");
  BOOST_TEST(r.error == "data.source.provider: missing (neither source.provider nor source.slug)");
  r = webhook(R"({"event_type":"daily.data.heartrate.created","data":{"source":{"provider":"p"},
      "data":[{"timestamp":"2024-06-02T10:00:00Z","value":1}]}})");
  BOOST_TEST(r.error == "data.user_id: missing");
  r = webhook(R"({"event_type":"daily.data.heartrate.created","user_id":"u","data":{"source":{"provider":"p"},
      "data":[{"timestamp":"2024-06-02T10:00:00Z","value":{"a":1}}]}})");
  BOOST_TEST(r.error == "data.data[0].value: expected a number, string or null, got an object");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(notices, ParserFixture)

BOOST_AUTO_TEST_CASE(workout_stream) {
  const ParseResult r = example("workout-stream.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::workout_stream));
  BOOST_REQUIRE(rows.workout_stream.has_value());
  BOOST_TEST(rows.workout_stream->workout_id == "fdc70dd0-8cc8-4ec8-8b80-121fd9a3302a");
  BOOST_TEST(text(rows.workout_stream->user_id) == "bf6222fb-5a3c-4d1e-9f2b-7c8d9e0f1a2b");
  BOOST_TEST(text(rows.workout_stream->provider) == "fitbit");
  BOOST_TEST(text(rows.workout_stream->provider_id) == "51278201336");
  BOOST_TEST(text(rows.workout_stream->sport) == "other");

  // Old form without provider_id/source: still a notice.
  BOOST_TEST(webhook(R"({"event_type":"daily.data.workout_stream.updated","data":{"workout_id":"w1","user_id":"u1"}})").error == "");
  BOOST_TEST(rows.workout_stream->workout_id == "w1");
  BOOST_TEST(!rows.workout_stream->provider);

  const ParseResult missing = webhook(R"({"event_type":"daily.data.workout_stream.created","data":{"user_id":"u1"}})");
  BOOST_TEST(missing.error == "data.workout_id: missing");
}

BOOST_AUTO_TEST_CASE(backfill_with_and_without_is_final) {
  ParseResult r = example("historical-backfill.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::backfill));
  BOOST_REQUIRE(rows.backfill.has_value());
  BOOST_TEST(rows.backfill->user_id == "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44");
  BOOST_TEST(rows.backfill->resource == "workouts");
  BOOST_TEST(rows.backfill->provider == "zwift");
  BOOST_TEST(rows.backfill->start_ms == 1592727781000);
  BOOST_TEST(rows.backfill->end_ms == 1730558368000);
  BOOST_TEST(rows.backfill->is_final.value_or(false) == true);

  r = example("historical-backfill-without-is-final.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST(rows.backfill->resource == "heartrate");
  BOOST_TEST(rows.backfill->provider == "garmin");
  BOOST_TEST(rows.backfill->start_ms == 1722729600000);
  BOOST_TEST(rows.backfill->end_ms == 1730505600000);
  BOOST_TEST(!rows.backfill->is_final.has_value());

  r = webhook(R"({"event_type":"historical.data.sleep.created","data":{"user_id":"u","start_date":"2024-01-01T00:00:00Z","end_date":"2024-02-01T00:00:00Z"}})");
  BOOST_TEST(r.error == "data.provider: missing");
  r = webhook(R"({"event_type":"historical.data.sleep.created","data":{"user_id":"u","provider":"oura","start_date":"2024-01-01T00:00:00Z","end_date":"soon"}})");
  BOOST_TEST(r.error == R"(data.end_date: not an ISO 8601 time "soon")");
  // A window that ends before it starts could never be fetched: the notice is invalid, not
  // a job that dies later. One that ends as it starts is a window of its own.
  r = webhook(R"({"event_type":"historical.data.sleep.created","data":{"user_id":"u","provider":"oura","start_date":"2024-02-01T00:00:00Z","end_date":"2024-01-01T00:00:00Z"}})");
  BOOST_TEST(r.error == "data.end_date: before start_date");
  r = webhook(R"({"event_type":"historical.data.sleep.created","data":{"user_id":"u","provider":"oura","start_date":"2024-02-01T00:00:00Z","end_date":"2024-02-01T00:00:00Z"}})");
  BOOST_TEST(r.error == "");
  // Dates alone (the service's `YYYY-MM-DD` form): the window takes the end date's whole day
  // (it ended at its first millisecond, and the fetch left that day out), up to the next
  // midnight as a notice of full times and `healthhook backfill --until` name it (black-box
  // pass: at …T23:59:59.999Z the same window was a second job).
  r = webhook(R"({"event_type":"historical.data.sleep.created","data":{"user_id":"u","provider":"oura","start_date":"2024-01-01","end_date":"2024-01-31"}})");
  BOOST_TEST(r.error == "");
  BOOST_REQUIRE(rows.backfill.has_value());
  BOOST_TEST(rows.backfill->start_ms == 1704067200000);      // 2024-01-01T00:00:00.000Z
  BOOST_TEST(rows.backfill->end_ms == 1706745600000);        // 2024-02-01T00:00:00.000Z
}

BOOST_AUTO_TEST_CASE(historical_event_carrying_data_is_a_summary) {
  // ETL pipelines can deliver the backfill itself; a historical event with an id is data.
  const ParseResult r = webhook(R"({"event_type":"historical.data.sleep.created","data":{"id":"h1","user_id":"u","source":{"provider":"oura","type":"ring"}}})");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::summary));
  BOOST_TEST(rows.summaries.at(0).id == "h1");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(connections_devices_labs, ParserFixture)

BOOST_AUTO_TEST_CASE(connection_created) {
  const ParseResult r = example("connection-created.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::connection));
  const ConnectionRow& c = rows.connection.value();
  BOOST_TEST(c.user_id == "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10");
  BOOST_TEST(c.provider == "fitbit");
  BOOST_TEST(c.status == "connected");
  BOOST_TEST(text(c.external_user_id) == "BX7Q2K");
  BOOST_TEST(!c.error_type);
  BOOST_TEST(c.event_type == "provider.connection.created");
  BOOST_REQUIRE(c.resource_availability_json.has_value());
  BOOST_TEST(c.resource_availability_json->substr(0, 15) == "{\n      \"sleep\"");
  BOOST_TEST(c.resource_availability_json->back() == '}');
  BOOST_TEST(c.data_json.find("\"external_user_id\": \"BX7Q2K\"") != std::string_view::npos);
}

BOOST_AUTO_TEST_CASE(connection_created_old_source_form) {
  BOOST_TEST(example("connection-created-old-source.json").error == "");
  BOOST_TEST(rows.connection->provider == "freestyle_libre_ble");
  BOOST_TEST(rows.connection->user_id == "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2");
  BOOST_TEST(!rows.connection->external_user_id);
  BOOST_TEST(!rows.connection->resource_availability_json);
  BOOST_TEST(rows.connection->event_type == "provider.connection.created");  // read from the body
}

BOOST_AUTO_TEST_CASE(connection_error) {
  BOOST_TEST(example("connection-error.json").error == "");
  const ConnectionRow& c = rows.connection.value();
  BOOST_TEST(c.provider == "oura");
  BOOST_TEST(c.status == "error");
  BOOST_TEST(text(c.error_type) == "token_refresh_failed");
  BOOST_TEST(text(c.error_message) == "The refresh token was revoked by the user.");

  std::string body = read_example("connection-error.json");
  body = replace(body, "token_refresh_failed", "provider_rate_limited_forever");
  BOOST_TEST(webhook(body).error == "");
  BOOST_TEST(text(rows.connection->error_type) == "provider_rate_limited_forever");

  const ParseResult missing = webhook(R"({"event_type":"provider.connection.error","data":{"user_id":"u","message":"m"}})");
  BOOST_TEST(missing.error == "data.provider: missing (neither provider nor source)");
  BOOST_TEST((missing.family == Family::connection));
}

BOOST_AUTO_TEST_CASE(device) {
  const ParseResult r = example("device.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::device));
  const DeviceRow& d = rows.device.value();
  BOOST_TEST(d.id == "a8f3c2d1-9b7e-4f6a-8c5d-4e3f2a1b0c9d");
  BOOST_TEST(text(d.user_id) == "e9e072e8-0b39-4e5a-a3b2-9a1c0f6b2d44");
  BOOST_TEST(text(d.provider) == "garmin");
  BOOST_TEST(text(d.source_type) == "watch");
  BOOST_TEST(!d.app_id);
  BOOST_TEST(text(d.device_manufacturer) == "Garmin");
  BOOST_TEST(text(d.device_model) == "Forerunner 965");
  BOOST_TEST(text(d.device_version) == "19.18");
  BOOST_TEST(text(d.device_id) == "3381942775");
  BOOST_TEST(webhook(R"({"event_type":"provider.device.updated","data":{"user_id":"u"}})").error == "data.id: missing");
}

BOOST_AUTO_TEST_CASE(lab_order) {
  const ParseResult r = example("lab-order.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::lab_order));
  const LabOrderRow& o = rows.lab_order.value();
  BOOST_TEST(o.id == "2f0e6d1c-8b4a-4e3f-9a7d-5c6b7a8d9e0f");
  BOOST_TEST(text(o.user_id) == "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10");
  BOOST_TEST(text(o.team_id) == "6b74423d-0504-4470-9afb-477252ccf67a");
  BOOST_TEST(text(o.status) == "sample_with_lab");
  BOOST_TEST(text(o.last_event_status) == "sample_with_lab.walk_in_test.partial_results");
  BOOST_TEST(text(o.status_detail) == "awaiting_remaining_markers");
  BOOST_TEST(text(o.interpretation) == "abnormal");

  // Orders from before last_event existed: the last item of events[].
  std::string body = read_example("lab-order.json");
  body = replace(body, R"("last_event": {"id": 6, "created_at": "2024-05-03T15:21:00+00:00", "status": "sample_with_lab.walk_in_test.partial_results", "status_detail": "awaiting_remaining_markers"},)", "");
  body = replace(body, R"("status": "sample_with_lab.walk_in_test.partial_results", "status_detail": "awaiting_remaining_markers"})",
                 R"("status": "completed.walk_in_test.completed", "status_detail": null})");
  BOOST_TEST(webhook(body).error == "");
  BOOST_TEST(text(rows.lab_order->last_event_status) == "completed.walk_in_test.completed");
  BOOST_TEST(!rows.lab_order->status_detail);
}

BOOST_AUTO_TEST_CASE(lab_appointment_and_result) {
  BOOST_TEST(example("lab-appointment.json").error == "");
  const LabAppointmentRow& a = rows.lab_appointment.value();
  BOOST_TEST(a.id == "6c5d4e3f-2a1b-4c0d-9e8f-7a6b5c4d3e2f");
  BOOST_TEST(text(a.order_id) == "2f0e6d1c-8b4a-4e3f-9a7d-5c6b7a8d9e0f");
  BOOST_TEST(text(a.status) == "confirmed");
  BOOST_TEST(text(a.event_status) == "scheduled");
  BOOST_TEST(text(a.start_at) == "2024-05-02T14:00:00+00:00");
  BOOST_TEST(text(a.end_at) == "2024-05-02T14:30:00+00:00");

  const ParseResult r = example("lab-result-critical.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::lab_result));
  const LabResultRow& l = rows.lab_result.value();
  BOOST_TEST(l.order_id == "2f0e6d1c-8b4a-4e3f-9a7d-5c6b7a8d9e0f");
  BOOST_TEST(text(l.sample_id) == "123456789");
  BOOST_TEST(text(l.status) == "partial");
  BOOST_TEST(text(l.interpretation) == "critical");
  BOOST_TEST(text(l.user_id) == "1449752e-4b3c-4e2b-9f0e-5a7c6d8e9f10");
}

BOOST_AUTO_TEST_CASE(lab_parsing_job) {
  const ParseResult r = example("lab-parsing-job-completed.json");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::lab_parsing_job));
  const LabParsingJobRow& j = rows.lab_parsing_job.value();
  BOOST_TEST(j.id == "8eb0217f-3c4d-4e5f-9a0b-1c2d3e4f5a6b");
  BOOST_TEST(text(j.status) == "completed");
  BOOST_TEST(!j.failure_reason);
  BOOST_TEST(j.needs_human_review.value_or(true) == false);
  BOOST_TEST(j.is_reviewed.value_or(true) == false);
  BOOST_REQUIRE(j.results_json.has_value());
  BOOST_TEST(j.results_json->substr(0, 18) == "{\n      \"metadata\"");
  BOOST_TEST(j.results_json->find("\"loinc_code\": \"13457-7\"") != std::string_view::npos);

  BOOST_TEST(webhook(R"({"event_type":"lab_report.parsing_job.created","data":{"id":"j2","status":"upload_pending","data":null,"needs_human_review":false,"is_reviewed":false}})").error == "");
  BOOST_TEST(!rows.lab_parsing_job->results_json);
  BOOST_TEST(text(rows.lab_parsing_job->status) == "upload_pending");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(other_events, ParserFixture)

BOOST_AUTO_TEST_CASE(hypnogram_is_ignored) {
  const ParseResult r = example("hypnogram.json");
  BOOST_TEST((r.status == Status::ignored));
  BOOST_TEST((r.family == Family::hypnogram));
  BOOST_TEST(rows.sample_batches.empty());
  const ParseResult r2 = webhook(R"({"event_type":"daily.data.hypnogram.created","data":{"data":[]}})");
  BOOST_TEST((r2.status == Status::ignored));
}

BOOST_AUTO_TEST_CASE(unknown_events_are_kept_as_unknown) {
  for (const char* name : {"continuous-query.json", "ping.json"}) {
    BOOST_TEST_CONTEXT(name) {
      const ParseResult r = example(name);
      BOOST_TEST((r.status == Status::unknown));
      BOOST_TEST((r.family == Family::other));
      BOOST_TEST(r.error == "");
    }
  }
}

// Issue 47: every resource of the interface's supported_resources is known. Those whose
// payload the interface does not show (sleep_stream, match_review, device_legacy, and the
// record resources in a data event) are classified with their resource's family and kept
// as unknown, never parsed by their shape into summaries or samples.
BOOST_AUTO_TEST_CASE(listed_resources_without_a_shown_payload_are_classified_not_parsed) {
  BOOST_TEST((classify_event_type("labtest.match_review.updated").kind == EventKind::unshown_resource));
  BOOST_TEST(classify_event_type("labtest.match_review.updated").resource == "match_review");
  BOOST_TEST((classify_event_type("daily.data.sleep_stream.created").kind == EventKind::unshown_resource));
  BOOST_TEST(classify_event_type("daily.data.sleep_stream.created").resource == "sleep_stream");
  BOOST_TEST((classify_event_type("historical.data.device_legacy.created").kind == EventKind::unshown_resource));
  BOOST_TEST((classify_event_type("provider.device_legacy.created").kind == EventKind::unshown_resource));
  BOOST_TEST((classify_event_type("daily.data.note.created").kind == EventKind::resource_data));

  ParserFixture f;
  const ParseResult review = f.example("unknown-event.json");  // labtest.match_review.created
  BOOST_TEST((review.status == Status::unknown));
  BOOST_TEST((review.family == Family::match_review));
  BOOST_TEST(review.error == "");

  // A summary's shape under sleep_stream: not a summary.
  const ParseResult stream = f.webhook(R"({"event_type":"daily.data.sleep_stream.created","user_id":"u1",)"
                                       R"("data":{"id":"s1","user_id":"u1","source":{"provider":"oura"}}})");
  BOOST_TEST((stream.status == Status::unknown));
  BOOST_TEST((stream.family == Family::sleep_stream));
  BOOST_TEST(f.rows.summaries.empty());
  BOOST_TEST(!f.rows.identity.user_id.has_value());

  // Samples under device_legacy: not a timeseries.
  const ParseResult legacy = f.webhook(R"({"event_type":"daily.data.device_legacy.created","data":{"user_id":"u1",)"
                                       R"("source":{"provider":"oura"},"data":[{"timestamp":"2024-05-01T00:00:00Z","value":1}]}})");
  BOOST_TEST((legacy.status == Status::unknown));
  BOOST_TEST((legacy.family == Family::device_legacy));
  BOOST_TEST(f.rows.sample_batches.empty());

  // A record resource named by a data event: its family, not its record's row.
  const ParseResult order = f.webhook(R"({"event_type":"daily.data.order.created","data":{"id":"o1","user_id":"u1"}})");
  BOOST_TEST((order.status == Status::unknown));
  BOOST_TEST((order.family == Family::lab_order));
  BOOST_TEST(!f.rows.lab_order.has_value());
  BOOST_TEST(f.rows.summaries.empty());

  // Still read through: invalid JSON is invalid everywhere.
  BOOST_TEST((f.webhook(R"({"event_type":"labtest.match_review.created","data":{"id":tru}})").status == Status::invalid));

  // note is a timeseries of the catalog (with tags).
  const ParseResult note = f.webhook(R"({"event_type":"daily.data.note.created","data":{"user_id":"u1",)"
                                     R"("source":{"provider":"apple_health_kit"},"data":[{"timestamp":"2024-05-01T00:00:00Z",)"
                                     R"("start":"2024-05-01T00:00:00Z","end":"2024-05-01T00:01:00Z","value":1,"unit":"count","tags":["x"]}]}})");
  BOOST_TEST((note.status == Status::processed));
  BOOST_TEST((note.family == Family::timeseries));
}

// Issue 47: the optional App ID of a source context, on summaries and sample batches.
BOOST_AUTO_TEST_CASE(the_app_id_of_a_source_context_is_kept) {
  ParserFixture f;
  BOOST_TEST(f.webhook(R"({"event_type":"daily.data.sleep.created","data":{"id":"s1","user_id":"u1",)"
                       R"("source":{"provider":"apple_health_kit","type":"watch","app_id":"com.example.sleep"}}})")
                 .error == "");
  BOOST_REQUIRE_EQUAL(f.rows.summaries.size(), 1u);
  BOOST_TEST(text(f.rows.summaries[0].app_id) == "com.example.sleep");
  BOOST_TEST(f.webhook(R"({"event_type":"daily.data.meal.created","data":{"id":"m1","user_id":"u1",)"
                       R"("source_provider":"apple_health_kit","source_app_id":"com.example.food","data":{}}})")
                 .error == "");
  BOOST_TEST(text(f.rows.summaries.at(0).app_id) == "com.example.food");
  BOOST_TEST(f.example("summary-sleep.json").error == "");
  BOOST_TEST(text(f.rows.summaries.at(0).app_id) == "<null>");
  BOOST_TEST(f.webhook(R"({"event_type":"daily.data.steps.created","data":{"user_id":"u1","source":{)"
                       R"("provider":"apple_health_kit","app_id":"com.example.steps"},"data":[{"timestamp":)"
                       R"("2024-05-01T00:00:00Z","value":3}]}})")
                 .error == "");
  BOOST_REQUIRE_EQUAL(f.rows.sample_batches.size(), 1u);
  BOOST_TEST(text(f.rows.sample_batches[0].app_id) == "com.example.steps");
  BOOST_TEST(f.webhook(R"({"event_type":"daily.data.steps.created","data":{"user_id":"u1","source":{)"
                       R"("provider":"oura","app_id":null},"data":[{"timestamp":"2024-05-01T00:00:00Z","value":3}]}})")
                 .error == "");
  BOOST_TEST(text(f.rows.sample_batches.at(0).app_id) == "<null>");
}

// Issue 47: the fetched rows of the parsing-results follow-up and of `user deregister`.
BOOST_AUTO_TEST_CASE(fetched_parsing_jobs_and_deregistrations) {
  ParserFixture f;
  const std::string job = R"({"id":"j1","status":"completed","failure_reason":null,"needs_human_review":false,)"
                          R"("is_reviewed":false,"data":{"metadata":{},"results":[{"test_name":"LDL"}]}})";
  ParseResult r = f.fetched(R"({"kind":"parsing_job","job_id":"j1","url":"https://x"})", job, "fetch.parsing_job");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.status == Status::processed));
  BOOST_TEST((r.family == Family::fetched_parsing_job));
  BOOST_REQUIRE(f.rows.lab_parsing_job.has_value());
  BOOST_TEST(text(f.rows.lab_parsing_job->results_json) == R"({"metadata":{},"results":[{"test_name":"LDL"}]})");
  // The job names no user; the fetch context's (the webhook's) is the row's.
  r = f.fetched(R"({"kind":"parsing_job","job_id":"j1","user_id":"u7","url":"https://x"})", job, "fetch.parsing_job");
  BOOST_TEST(r.error == "");
  BOOST_TEST(text(f.rows.lab_parsing_job->user_id) == "u7");
  r = f.fetched(R"({"kind":"parsing_job","job_id":"j2"})", job, "fetch.parsing_job");
  BOOST_TEST((r.status == Status::invalid));
  BOOST_TEST(r.error == "id: not the job fetched \"j2\"");
  BOOST_TEST((f.fetched(R"({"kind":"parsing_job"})", job).status == Status::invalid));
  BOOST_TEST((f.fetched(R"({"kind":"parsing_job","job_id":"j1"})", "[1]").status == Status::invalid));

  const std::string context = R"({"kind":"deregistration","user_id":"u1","provider":"oura",)"
                              R"("deregistered_at":"2024-06-01T00:00:00.000Z","url":"https://x/v2/user/u1/oura"})";
  r = f.fetched(context, R"({"success":true})", "fetch.deregistration");
  BOOST_TEST(r.error == "");
  BOOST_TEST((r.family == Family::fetched_deregistration));
  BOOST_REQUIRE(f.rows.deregistration.has_value());
  BOOST_TEST(f.rows.deregistration->user_id == "u1");
  BOOST_TEST(f.rows.deregistration->provider == "oura");
  BOOST_TEST(f.rows.deregistration->deregistered_at_ms == 1717200000000);
  BOOST_TEST(f.rows.deregistration->event_type == "fetch.deregistration");
  BOOST_TEST(!f.rows.identity.user_id.has_value());
  r = f.fetched(context, R"({"success":false})", "fetch.deregistration");
  BOOST_TEST(r.error == "success: not true: nothing was deregistered");
  BOOST_TEST(!f.rows.deregistration.has_value());
  BOOST_TEST((f.fetched(R"({"kind":"deregistration","user_id":"u1","provider":"oura"})", R"({"success":true})")
                  .status == Status::invalid));
}

// Spec §4 "Identity": the envelope's user_id, client_user_id and team_id since Mar 2024;
// before, only $.data.user_id names the user.
BOOST_AUTO_TEST_CASE(identity_from_the_new_envelope) {
  ParserFixture f;
  BOOST_TEST(f.example("timeseries-steps-old-source.json").error == "");
  BOOST_TEST(text(f.rows.identity.user_id) == "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2");
  BOOST_TEST(text(f.rows.identity.client_user_id) == "01HW3FSNVCHC3B2QB5N0ZAAAVG");
  BOOST_TEST(text(f.rows.identity.team_id) == "6b74423d-0504-4470-9afb-477252ccf67a");
  BOOST_REQUIRE(f.rows.sample_batches.size() == 1u);
  BOOST_TEST(as_int(f.rows.sample_batches[0].source_id) == 16);
  BOOST_TEST(f.example("device.json").error == "");
  BOOST_TEST(text(f.rows.identity.client_user_id) == "athlete-5521");
}

BOOST_AUTO_TEST_CASE(identity_from_the_old_envelope) {
  ParserFixture f;
  BOOST_TEST(f.example("timeseries-steps-old-envelope.json").error == "");
  BOOST_TEST(text(f.rows.identity.user_id) == "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2");  // from $.data
  BOOST_TEST(text(f.rows.identity.client_user_id) == "<null>");
  BOOST_TEST(text(f.rows.identity.team_id) == "<null>");
  BOOST_TEST(as_int(f.rows.sample_batches[0].source_id) == 16);
  // A lab order names its team in data.
  BOOST_TEST(f.example("lab-order.json").error == "");
  BOOST_TEST(text(f.rows.identity.team_id) != "<null>");
  // Identity never rejects a delivery: an object where a text is expected is left out.
  const ParseResult odd = f.webhook(R"({"event_type":"daily.data.sleep.created","client_user_id":{"a":1},"team_id":7,)"
                                    R"("data":{"id":"s1","user_id":"u1","source":{"provider":"oura"}}})");
  BOOST_TEST(odd.error == "");
  BOOST_TEST(text(f.rows.identity.client_user_id) == "<null>");
  BOOST_TEST(text(f.rows.identity.team_id) == "7");
  BOOST_TEST(f.webhook(R"({"event_type":"daily.data.sleep.created","client_user_id":{"a":tru},)"
                       R"("data":{"id":"s1","user_id":"u1"}})")
                 .error.starts_with("client_user_id: "));
  // A boolean is no id either: left out, where it was kept as the id "true".
  BOOST_TEST(f.webhook(R"({"event_type":"daily.data.sleep.created","client_user_id":true,"team_id":false,)"
                       R"("data":{"id":"s1","user_id":"u1","source":{"provider":"oura"}}})")
                 .error == "");
  BOOST_TEST(text(f.rows.identity.client_user_id) == "<null>");
  BOOST_TEST(text(f.rows.identity.team_id) == "<null>");
}

// The event catalog grows (reference notes §1): a new resource whose data is neither a
// summary nor samples is kept as unknown; a known one with that shape is invalid.
BOOST_AUTO_TEST_CASE(new_resources_of_unknown_shape_are_unknown) {
  ParserFixture f;
  const ParseResult unknown = f.example("new-resource-unknown-shape.json");
  BOOST_TEST((unknown.status == Status::unknown));
  BOOST_TEST((unknown.family == Family::other));
  BOOST_TEST(unknown.error == "");
  BOOST_TEST(f.rows.summaries.empty());
  BOOST_TEST(f.rows.sample_batches.empty());
  BOOST_TEST(!f.rows.identity.user_id.has_value());
  const ParseResult historical = f.webhook(
      R"({"event_type":"historical.data.skin_conductance.created","data":{"user_id":"u1","provider":"oura"}})");
  BOOST_TEST((historical.status == Status::unknown));
  // The same shape under a known resource is a missing field.
  const ParseResult known = f.webhook(R"({"event_type":"daily.data.sleep.created","data":{"user_id":"u1"}})");
  BOOST_TEST((known.status == Status::invalid));
  BOOST_TEST((known.family == Family::summary));
  BOOST_TEST(known.error == "data.id: missing");
  // A known timeseries resource may be either until its data says.
  BOOST_TEST(f.webhook(R"({"event_type":"daily.data.heartrate.created","data":{"user_id":"u1"}})").error ==
             "data.id: missing (a summary needs an id, a timeseries a data[] array)");
  // A new resource with a known shape is stored as such.
  BOOST_TEST((f.webhook(R"({"event_type":"daily.data.skin_conductance.created","data":{"id":"x","user_id":"u1"}})")
                  .family == Family::summary));
  BOOST_TEST((f.webhook(R"({"event_type":"daily.data.skin_conductance.created","data":{"user_id":"u1",)"
                        R"("source":{"provider":"oura"},"data":[{"timestamp":"2024-01-01T00:00:00Z","value":1}]}})")
                  .family == Family::timeseries));
}

BOOST_AUTO_TEST_CASE(envelope_errors) {
  BOOST_TEST(webhook(R"({"data":{"id":"x"}})").error == "event_type: missing");
  BOOST_TEST(webhook(R"({"event_type":7,"data":{}})").error == "event_type: expected a string, got a number");
  BOOST_TEST(webhook(R"({"event_type":"","data":{}})").error == "event_type: empty");
  BOOST_TEST(webhook(R"([1,2])").error == "body: not a JSON object");
  BOOST_TEST(webhook(R"("daily.data.sleep.created")").error == "body: not a JSON object");
  BOOST_TEST(webhook("   ").error == "body: empty");
  BOOST_TEST(webhook(R"({"event_type":"daily.data.sleep.created"})").error == "data: missing");
  BOOST_TEST(webhook(R"({"event_type":"daily.data.sleep.created","data":[{"id":"x"}]})").error ==
             "data: expected an object, got an array");
  // Text that does not parse is not JSON; JSON of another kind is not an object (both were
  // "not a JSON object").
  BOOST_TEST(webhook("event_type=daily.data.sleep.created").error == "body: not JSON (expected a value at byte 0)");
  BOOST_TEST(webhook("not json at all").error == "body: not JSON (unexpected character at byte 0)");
  BOOST_TEST(webhook("[1,2").error == "body: not JSON (unexpected end of input in an array at byte 4)");
  BOOST_TEST(webhook(" null ").error == "body: not a JSON object");
  // An array nested past the scanner's depth is JSON of another kind too (it said "not JSON
  // (nested too deeply …)").
  BOOST_TEST(webhook(std::string(1500, '[') + std::string(1500, ']')).error == "body: not a JSON object");
  // A byte order mark is named: it is invisible in most tools, and the object after it looks fine.
  BOOST_TEST(webhook("\xEF\xBB\xBF{\"event_type\":\"daily.data.sleep.created\",\"data\":{}}").error ==
             "body: starts with a UTF-8 byte order mark");
  const ParseResult r = webhook("{event_type: 1}");
  BOOST_TEST((r.status == Status::invalid));
  BOOST_TEST(r.error.substr(0, 20) == "body: not valid JSON");
}

BOOST_AUTO_TEST_CASE(rows_do_not_leak_between_deliveries) {
  BOOST_TEST(example("timeseries-heartrate.json").error == "");
  BOOST_TEST(rows.sample_batches.at(0).samples.size() == 3u);
  BOOST_TEST(example("summary-sleep.json").error == "");
  BOOST_TEST(rows.sample_batches.empty());
  BOOST_TEST(rows.summaries.size() == 1u);
  BOOST_TEST(example("timeseries-glucose.json").error == "");
  BOOST_TEST(rows.summaries.empty());
  BOOST_TEST(rows.sample_batches.at(0).samples.size() == 3u);
  BOOST_TEST(rows.sample_batches.at(0).provider == "freestyle_libre");
  BOOST_TEST(rows.sample_batches.at(0).samples.at(0).extra_json == "");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // delivery_parser_test

}  // namespace hh::events
