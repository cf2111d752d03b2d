#include "tests/derived/corpus.h"

#include <random>

#include "common/timestamp.h"

namespace hh::test {
namespace {

constexpr int64_t kBaseMs = 1717200000000;  // 2024-06-01T00:00:00Z

std::string iso(int64_t ms) { return format_rfc3339_ms(ms); }

store::NewDelivery webhook(const std::string& id, std::string event_type, std::string body, int64_t received_at) {
  store::NewDelivery d;
  d.message_id = id;
  d.received_at_ms = received_at;
  d.webhook_timestamp = received_at / 1000;
  d.event_type = std::move(event_type);
  d.headers_json = R"({"svix-id":")" + id + R"(","svix-timestamp":")" + std::to_string(received_at / 1000) +
                   R"(","svix-signature":"v1,test"})";
  d.body = std::move(body);
  return d;
}

store::NewDelivery fetched(const std::string& id, std::string event_type, std::string context, std::string body,
                           int64_t received_at) {
  store::NewDelivery d;
  d.message_id = id;
  d.origin = store::Origin::fetch;
  d.received_at_ms = received_at;
  d.event_type = std::move(event_type);
  d.headers_json = std::move(context);
  d.body = std::move(body);
  return d;
}

std::string envelope(const std::string& event_type, const std::string& data, const std::string& user,
                     const std::string& client_user_id = "c-1") {
  if (client_user_id.empty()) return R"({"event_type":")" + event_type + R"(","data":)" + data + "}";  // before Mar 2024
  return R"({"event_type":")" + event_type + R"(","data":)" + data + R"(,"user_id":")" + user +
         R"(","client_user_id":")" + client_user_id + R"(","team_id":"t-1"})";
}

std::string source(const std::string& provider, const std::string& type) {
  return R"({"provider":")" + provider + R"(","type":")" + type + R"("})";
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  // The envelope's old form (no user fields) now and then, and a client_user_id that
  // changes for some users.
  std::string envelope(const std::string& event_type, const std::string& data, const std::string& user) {
    const int form = pick(8);
    if (form == 0) return test::envelope(event_type, data, user, "");
    return test::envelope(event_type, data, user, "client-" + user.substr(5) + (form == 1 ? "-renamed" : ""));
  }
  std::string user() { return "user-" + std::to_string(pick(3)); }
  std::string provider() { return pick(2) ? "garmin" : "oura"; }

  std::string samples_json(const std::string& resource, int count) {
    std::string out = "[";
    const int64_t start = pick(200);
    for (int i = 0; i < count; ++i) {
      const int64_t t = kBaseMs + (start + i) * 60000;
      if (i) out += ",";
      if (resource == "steps") {
        out += R"({"start":")" + iso(t) + R"(","end":")" + iso(t + 60000) + R"(","timezone_offset":3600,"type":null,)" +
               R"("unit":"count","value":)" + std::to_string(pick(100)) + "}";
      } else if (resource == "blood_pressure") {
        out += R"({"timestamp":")" + iso(t) + R"(","timezone_offset":-18000,"type":null,"unit":"mmHg",)" +
               R"("grouping":{"reading_id":"r-)" + std::to_string(pick(9)) + R"("},"systolic":)" +
               std::to_string(100 + pick(40)) + R"(,"diastolic":)" + std::to_string(60 + pick(30)) + ".5}";
      } else if (resource == "cholesterol") {
        out += R"({"timestamp":")" + iso(t) + R"(","timezone_offset":null,"type":")" + (pick(2) ? "ldl" : "hdl") +
               R"(","unit":"mg/dL","value":)" + std::to_string(pick(200)) + ".25}";
      } else {
        out += R"({"id":null,"timestamp":")" + iso(t) + R"(","timezone_offset":7200,"type":null,"unit":"bpm","value":)" +
               std::to_string(50 + pick(100)) + "}";
      }
    }
    return out + "]";
  }

  std::string summary_json(const std::string& resource, const std::string& id, const std::string& user) {
    const int64_t day = kBaseMs + pick(30) * 86400000LL;
    return R"({"id":")" + id + R"(","user_id":")" + user + R"(","calendar_date":"2024-06-)" +
           std::to_string(10 + pick(9)) + R"(","bedtime_start":")" + iso(day) + R"(","bedtime_stop":")" +
           iso(day + 28800000) + R"(","time_start":")" + iso(day) + R"(","time_end":")" + iso(day + 3600000) +
           R"(","score":)" + std::to_string(pick(100)) + R"(,"source":)" + source(provider(), "ring") +
           R"(,"resource":")" + resource + R"("})";
  }

  store::NewDelivery next(size_t n, CorpusCounts& counts) {
    const std::string id = "msg_" + std::to_string(n);
    const int64_t received = kBaseMs + static_cast<int64_t>(n) * 1000;
    const std::string u = user();
    const int roll = pick(100);
    if (roll < 30) {
      static const char* resources[] = {"heartrate", "steps", "blood_pressure", "cholesterol"};
      const std::string resource = resources[pick(4)];
      const std::string event = "daily.data." + resource + (pick(2) ? ".created" : ".updated");
      const std::string data = R"({"data":)" + samples_json(resource, 1 + pick(20)) + R"(,"source":)" +
                               source(provider(), pick(2) ? "watch" : "phone") + R"(,"user_id":")" + u + R"("})";
      return webhook(id, event, envelope(event, data, u), received);
    }
    if (roll < 50) {
      static const char* resources[] = {"sleep", "activity", "workouts"};
      const std::string resource = resources[pick(3)];
      const std::string event = "daily.data." + resource + ".updated";
      const std::string data = summary_json(resource, resource + "-" + std::to_string(pick(15)), u);
      return webhook(id, event, envelope(event, data, u), received);
    }
    if (roll < 55) {
      const std::string event = "daily.data.workout_stream.created";
      const std::string data = R"({"message":"use the stream endpoint","provider_id":"p-)" + std::to_string(pick(5)) +
                               R"(","sport":{"id":1,"name":"Run","slug":")" + (pick(2) ? "running" : "cycling") +
                               R"("},"workout_id":"wk-)" + std::to_string(pick(6)) + R"(","source":)" +
                               source(provider(), "watch") + R"(,"user_id":")" + u + R"("})";
      return webhook(id, event, envelope(event, data, u), received);
    }
    if (roll < 58) {
      const std::string event = std::string("historical.data.") + (pick(2) ? "sleep" : "heartrate") + ".created";
      const int64_t start = kBaseMs - pick(3) * 86400000LL;
      const std::string data = R"({"user_id":")" + u + R"(","start_date":")" + iso(start) + R"(","end_date":")" +
                               iso(start + 86400000LL * 30) + R"(","provider":")" + provider() + R"("})";
      return webhook(id, event, envelope(event, data, u), received);
    }
    if (roll < 63) {
      if (pick(2)) {
        const std::string event = "provider.connection.created";
        const std::string p = provider();
        const std::string data = R"({"user_id":")" + u + R"(","provider":{"name":"P","slug":")" + p +
                                 R"("},"external_user_id":"x)" + std::to_string(pick(9)) + R"("})";
        return webhook(id, event, envelope(event, data, u), received);
      }
      const std::string event = "provider.connection.error";
      const std::string data = R"({"provider":")" + provider() + R"(","user_id":")" + u +
                               R"(","message":"revoked","error_type":"token_refresh_failed"})";
      return webhook(id, event, envelope(event, data, u), received);
    }
    if (roll < 67) {
      const std::string event = "provider.device.updated";
      const std::string data = R"({"id":"dev-)" + std::to_string(pick(5)) + R"(","user_id":")" + u +
                               R"(","provider":"garmin","source_type":"watch","device_model":"FR)" +
                               std::to_string(pick(9)) + R"("})";
      return webhook(id, event, envelope(event, data, u), received);
    }
    if (roll < 75) {
      const int kind = pick(4);
      const std::string n_id = std::to_string(pick(4));
      if (kind == 0) {
        const std::string event = "labtest.order.updated";
        const std::string data = R"({"id":"ord-)" + n_id + R"(","team_id":"t-1","user_id":")" + u +
                                 R"(","status":"received","events":[{"id":1,"created_at":"2024-05-01T10:00:00+00:00",)"
                                 R"("status":"received.walk_in_test.ordered","status_detail":null}],)"
                                 R"("last_event":{"id":2,"created_at":"2024-05-03T15:21:00+00:00","status":)"
                                 R"("sample_with_lab.walk_in_test.partial_results","status_detail":"s)" +
                                 std::to_string(pick(5)) + R"("}})";
        return webhook(id, event, envelope(event, data, u), received);
      }
      if (kind == 1) {
        const std::string event = "labtest.appointment.updated";
        const std::string data = R"({"id":"apt-)" + n_id + R"(","user_id":")" + u +
                                 R"(","order_id":"ord-1","start_at":"2024-05-02T14:00:00+00:00",)"
                                 R"("end_at":"2024-05-02T14:30:00+00:00","status":"confirmed","event_status":"e)" +
                                 std::to_string(pick(5)) + R"("})";
        return webhook(id, event, envelope(event, data, u), received);
      }
      if (kind == 2) {
        const std::string event = "labtest.result.critical";
        const std::string data = R"({"order_id":"ord-)" + n_id + R"(","sample_id":"s-1","status":"partial",)"
                                 R"("interpretation":"critical","user_id":")" + u + R"("})";
        return webhook(id, event, envelope(event, data, u), received);
      }
      const std::string event = "lab_report.parsing_job.updated";
      const std::string data = R"({"id":"job-)" + n_id + R"(","status":")" + (pick(2) ? "completed" : "started") +
                               R"(","failure_reason":null,"needs_human_review":false,"is_reviewed":true,)"
                               R"("data":{"results":[{"test_name":"LDL","value":")" + std::to_string(pick(200)) +
                               R"("}]}})";
      return webhook(id, event, envelope(event, data, u), received);
    }
    if (roll < 78) {
      ++counts.ignored;
      const std::string event = "daily.timeseries.hypnogram.created";
      return webhook(id, event, envelope(event, R"({"data":[],"source":{"provider":"oura"}})", u), received);
    }
    if (roll < 81) {
      ++counts.unknown;
      if (pick(2)) {  // a resource the catalog did not have yet, neither summary nor samples
        const std::string event = "daily.data.brand_new_resource.created";
        return webhook(id, event, envelope(event, R"({"user_id":")" + u + R"(","source":{"provider":"oura"}})", u),
                       received);
      }
      return webhook(id, "labtest.match_review.created",
                     R"({"event_type":"labtest.match_review.created","team_id":"t-1","data":{"id":"mr-1"}})",
                     received);
    }
    if (roll < 84) {
      ++counts.invalid;
      if (pick(2)) return webhook(id, "daily.data.sleep.created", "{not json", received);
      return webhook(id, "daily.data.heartrate.created",
                     R"({"event_type":"daily.data.heartrate.created","data":{"data":[{"timestamp":"yesterday",)"
                     R"("value":1}],"source":{"provider":"oura"},"user_id":"u"}})",
                     received);
    }
    // Fetched rows, as the follow-up fetcher stores them.
    const int kind = pick(7);
    const std::string fetch_id = "fetch:" + std::to_string(n) + ":1:0";
    if (kind == 0) {
      const std::string workout = "wk-" + std::to_string(pick(6));
      std::string times = "[", heartrate = "[";
      const int points = pick(30);
      for (int i = 0; i < points; ++i) {
        times += (i ? "," : "") + std::to_string(1717200000 + i);
        heartrate += (i ? "," : "") + (pick(5) ? std::to_string(100 + pick(80)) : std::string("null"));
      }
      const std::string body = R"({"time":)" + times + R"(],"heartrate":)" + heartrate + R"(],"altitude":[12.5]})";
      const std::string context = R"({"kind":"workout_stream","workout_id":")" + workout + R"(","user_id":")" + u +
                                  R"(","provider":"garmin","url":"https://x/v2/timeseries/workouts/w/stream"})";
      return fetched(fetch_id, "fetch.workout_stream", context, body, received);
    }
    if (kind == 1) {
      std::string list;
      for (int i = 0, m = 1 + pick(3); i < m; ++i) {
        list += (i ? "," : "") + summary_json("sleep", "sleep-" + std::to_string(pick(15)), u);
      }
      const std::string context = R"({"kind":"summaries","resource":"sleep","user_id":")" + u +
                                  R"(","provider":"oura","url":"https://x/v2/summary/sleep/u"})";
      return fetched(fetch_id, "fetch.summaries.sleep", context, R"({"sleep":[)" + list + "]}", received);
    }
    if (kind == 4) {  // the meal endpoint's list is "meals" (reference notes §3.1)
      const std::string meal = R"({"id":"meal-)" + std::to_string(pick(4)) + R"(","user_id":")" + u +
                               R"(","timestamp":")" + iso(kBaseMs + pick(30) * 3600000LL) +
                               R"(","name":"Lunch","energy":{"unit":"kcal","value":)" + std::to_string(300 + pick(400)) +
                               R"(},"source":{"provider":"myfitnesspal","type":"app"}})";
      const std::string context = R"({"kind":"summaries","resource":"meal","items_key":"meals","user_id":")" + u +
                                  R"(","provider":"myfitnesspal","url":"https://x/v2/summary/meal/u"})";
      return fetched(fetch_id, "fetch.summaries.meal", context, R"({"meals":[)" + meal + "]}", received);
    }
    if (kind == 5) {  // profile: one object, no list
      const std::string body = R"({"id":"profile-)" + u + R"(","user_id":")" + u + R"(","height":)" +
                               std::to_string(150 + pick(50)) + R"(,"source":{"provider":"fitbit","type":"app"}})";
      const std::string context = R"({"kind":"summary","resource":"profile","user_id":")" + u +
                                  R"(","provider":"fitbit","url":"https://x/v2/summary/profile/u"})";
      return fetched(fetch_id, "fetch.summary.profile", context, body, received);
    }
    if (kind == 6) {  // the provider list
      const std::string body = R"([{"name":"Oura","slug":"oura","description":"Ring","logo":"https://x/oura.png",)"
                               R"("auth_type":"oauth","supported_resources":["sleep","heartrate"]},)"
                               R"({"name":"Garmin )" + std::to_string(pick(3)) +
                               R"(","slug":"garmin","description":"Watch","logo":null,"auth_type":"oauth"}])";
      return fetched("fetch:providers:" + std::to_string(n), "fetch.providers",
                     R"({"kind":"providers","url":"https://x/v2/providers"})", body, received);
    }
    if (kind == 2) {
      const std::string body = R"({"groups":{"garmin":[{"source":)" + source("garmin", "watch") + R"(,"data":)" +
                               samples_json("heartrate", 1 + pick(10)) + R"(}]},"next_cursor":null})";
      const std::string context = R"({"kind":"timeseries","resource":"heartrate","user_id":")" + u +
                                  R"(","provider":"garmin","url":"https://x/v2/timeseries/u/heartrate/grouped"})";
      return fetched(fetch_id, "fetch.timeseries.heartrate", context, body, received);
    }
    std::string list;
    for (int i = 0, m = 1 + pick(2); i < m; ++i) {
      list += (i ? "," : "") + summary_json("workouts", "wk-" + std::to_string(pick(6)), u);
    }
    const std::string context = R"({"kind":"workouts_for_streams","user_id":")" + u +
                                R"(","provider":"garmin","url":"https://x/v2/summary/workouts/u"})";
    return fetched(fetch_id, "fetch.workouts_for_streams", context, R"({"workouts":[)" + list + "]}", received);
  }

 private:
  std::mt19937 rng_;
};

}  // namespace

std::vector<store::NewDelivery> make_corpus(size_t count, uint32_t seed, CorpusCounts* counts) {
  Generator generator(seed);
  CorpusCounts local;
  std::vector<store::NewDelivery> corpus;
  corpus.reserve(count);
  for (size_t n = 0; n < count; ++n) corpus.push_back(generator.next(n, local));
  if (counts) *counts = local;
  return corpus;
}

store::NewDelivery sleep_delivery(const std::string& message_id, const std::string& summary_id, int score) {
  const std::string data = R"({"id":")" + summary_id +
                           R"(","user_id":"u1","calendar_date":"2024-06-02","bedtime_start":"2024-06-01T23:00:00+01:00",)"
                           R"("bedtime_stop":"2024-06-02T07:00:00+01:00","score":)" +
                           std::to_string(score) + R"(,"source":{"provider":"oura","type":"ring"}})";
  return webhook(message_id, "daily.data.sleep.updated", envelope("daily.data.sleep.updated", data, "u1"), kBaseMs);
}

store::NewDelivery heartrate_delivery(const std::string& message_id, int64_t first_ms, int samples, int bpm) {
  std::string list = "[";
  for (int i = 0; i < samples; ++i) {
    list += (i ? "," : "") + std::string(R"({"timestamp":")") + iso(first_ms + i * 1000) +
            R"(","timezone_offset":0,"type":null,"unit":"bpm","value":)" + std::to_string(bpm) + "}";
  }
  const std::string data = R"({"data":)" + list + R"(],"source":{"provider":"garmin","type":"watch"},"user_id":"u1"})";
  return webhook(message_id, "daily.data.heartrate.created", envelope("daily.data.heartrate.created", data, "u1"),
                 kBaseMs);
}

store::NewDelivery raw_delivery(const std::string& message_id, const std::string& body) {
  return webhook(message_id, "", body, kBaseMs);
}

}  // namespace hh::test
