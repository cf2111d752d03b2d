#include "tests/fake_service/fake_bodies.h"

#include <zlib.h>
#include <array>
#include <charconv>
#include <climits>
#include <cstdio>

#include "common/base64.h"
#include "common/json_writer.h"
#include "common/timestamp.h"

namespace hh::fake {
namespace {

constexpr int64_t kDayMs = 24 * 3600 * 1000;

std::string calendar_date(int64_t ms) { return format_rfc3339_ms(ms).substr(0, 10); }

// A stable UUID-shaped id (FNV-1a over the parts; test data, not a real UUID).
std::string stable_uuid(std::string_view a, std::string_view b, int64_t n) {
  uint64_t h1 = 1469598103934665603ULL, h2 = 1099511628211ULL * 7;
  auto mix = [&](std::string_view text) {
    for (const char c : text) {
      h1 = (h1 ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
      h2 = (h2 ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
    }
  };
  mix(a);
  mix("/");
  mix(b);
  mix("/" + std::to_string(n));
  char out[40];
  std::snprintf(out, sizeof out, "%08x-%04x-4%03x-a%03x-%012llx", static_cast<unsigned>(h1 >> 32),
                static_cast<unsigned>((h1 >> 16) & 0xffff), static_cast<unsigned>(h1 & 0xfff),
                static_cast<unsigned>((h2 >> 52) & 0xfff), static_cast<unsigned long long>(h2 & 0xffffffffffffULL));
  return out;
}

void append_number_array(std::string& out, std::string_view key, size_t points, const auto& value_of) {
  out.push_back('"');
  out.append(key);
  out.append("\":[");
  for (size_t i = 0; i < points; ++i) {
    if (i) out.push_back(',');
    value_of(out, i);
  }
  out.push_back(']');
}

void append_fixed(std::string& out, double value, int decimals) {
  char buf[48];
  const int n = std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  out.append(buf, static_cast<size_t>(n));
}

bool is_interval_resource(std::string_view resource) {
  static constexpr std::array<std::string_view, 8> kIntervals = {
      "steps", "calories_active", "calories_basal", "distance", "floors_climbed", "workout_duration", "water",
      "stand_hour"};
  for (const auto name : kIntervals) {
    if (name == resource) return true;
  }
  return false;
}

std::string_view unit_of(std::string_view resource) {
  if (resource == "heartrate") return "bpm";
  if (resource == "steps" || resource == "floors_climbed") return "count";
  if (resource == "glucose") return "mmol/L";
  if (resource == "calories_active" || resource == "calories_basal") return "kcal";
  if (resource == "distance") return "m";
  if (resource == "hrv") return "ms";
  if (resource == "blood_pressure") return "mmHg";
  if (resource == "blood_oxygen") return "%";
  return "unit";
}

void append_summary(std::string& out, std::string_view resource, std::string_view user_id, std::string_view provider,
                    int64_t day_ms) {
  json::ObjectWriter item(out);
  item.string("id", summary_id(resource, user_id, day_ms)).string("user_id", user_id);
  item.string("calendar_date", calendar_date(day_ms));
  if (resource == "sleep") {
    item.string("date", service_time(day_ms))
        .string("bedtime_start", service_time(day_ms - 2 * 3600 * 1000 + 600'000))
        .string("bedtime_stop", service_time(day_ms + 6 * 3600 * 1000))
        .string("type", "long_sleep")
        .integer("duration", 28200).integer("total", 25200).integer("awake", 3000).integer("light", 13500)
        .integer("rem", 6300).integer("deep", 5400).integer("timezone_offset", 3600).string("state", "confirmed");
  } else if (resource == "workouts") {
    item.string("title", "Morning Ride")
        .string("time_start", service_time(day_ms + 5 * 3600 * 1000))
        .string("time_end", service_time(day_ms + 6 * 3600 * 1000 + 1800 * 1000))
        .raw("sport", R"({"id":108,"name":"Cycling","slug":"cycling"})")
        .string("provider_id", std::to_string(51278201336LL + day_ms / kDayMs))
        .integer("average_hr", 141).integer("max_hr", 178).number("distance", 32150.5).integer("calories", 812);
  } else if (resource == "activity") {
    item.string("date", service_time(day_ms)).integer("calories_active", 534).integer("calories_total", 2406)
        .integer("steps", 9496).integer("distance", 7162).integer("floors_climbed", 12).integer("timezone_offset", 3600);
  } else if (resource == "body") {
    item.string("date", service_time(day_ms)).number("weight", 71.4).number("fat", 18.2);
  } else if (resource == "meal") {
    // ClientFacingMeal (reference notes §2.3): priority_id and source_id "have no meaning",
    // provider_id = id, `data` is an object of foods, not samples.
    const std::string id = summary_id(resource, user_id, day_ms);
    item.integer("priority_id", 41).integer("source_id", 22).string("provider_id", id)
        .string("timestamp", service_time(day_ms + 12 * 3600 * 1000 + 1860 * 1000))
        .string("name", "Lunch")
        .raw("energy", R"({"unit":"kcal","value":642.5})")
        .raw("macros", R"({"carbs":71.2,"protein":38.0,"fats":{"saturated":6.1,"total":21.3},"sugar":12.8})")
        .raw("micros", R"({"sodium":1180,"potassium":null})")
        .raw("data", R"({"Chicken burrito bowl":{"energy":{"unit":"kcal","value":642.5}}})")
        .null("source_app_id").null("source_device_id");
  }
  std::string source;
  json::ObjectWriter(source).string("provider", provider).string("type", "watch").null("app_id").close();
  item.raw("source", source);
  item.string("created_at", service_time(day_ms + 8 * 3600 * 1000))
      .string("updated_at", service_time(day_ms + 8 * 3600 * 1000));
  item.close();
}

}  // namespace

// "2024-08-04T06:00:00+00:00", the service's own form.
std::string service_time(int64_t ms) {
  std::string text = format_rfc3339_ms(ms);  // "…T06:00:00.000Z"
  text.resize(text.size() - 5);
  return text + "+00:00";
}

std::string stream_body(size_t points) {
  std::string out;
  out.reserve(points * 96 + 256);
  out.push_back('{');
  append_number_array(out, "time", points, [](std::string& o, size_t i) { o += std::to_string(1626625123 + i); });
  out.push_back(',');
  append_number_array(out, "distance", points, [](std::string& o, size_t i) { append_fixed(o, i * 3.1, 1); });
  out.push_back(',');
  append_number_array(out, "heartrate", points, [](std::string& o, size_t i) {
    if (i % 97 == 96) {
      o += "null";
    } else {
      o += std::to_string(120 + i % 40);
    }
  });
  out.push_back(',');
  append_number_array(out, "velocity_smooth", points,
                      [](std::string& o, size_t i) { append_fixed(o, 3.2 + static_cast<double>(i % 10) / 10, 1); });
  out.push_back(',');
  append_number_array(out, "lat", points,
                      [](std::string& o, size_t i) { append_fixed(o, 51.5 + static_cast<double>(i) * 1e-5, 6); });
  out.push_back(',');
  append_number_array(out, "lng", points,
                      [](std::string& o, size_t i) { append_fixed(o, -0.12 + static_cast<double>(i) * 1e-5, 6); });
  out.push_back(',');
  append_number_array(out, "altitude", points,
                      [](std::string& o, size_t i) { append_fixed(o, 10 + static_cast<double>(i % 50) / 10, 1); });
  out.push_back(',');
  append_number_array(out, "cadence", points, [](std::string& o, size_t i) { o += std::to_string(80 + i % 10); });
  out.push_back(',');
  append_number_array(out, "power", points, [](std::string& o, size_t i) { o += std::to_string(150 + i % 60); });
  out.append(",\"resistance\":[],\"temperature\":null}");
  return out;
}

std::string summary_id(std::string_view resource, std::string_view user_id, int64_t day_ms) {
  return stable_uuid(resource, user_id, day_ms / kDayMs);
}

std::string_view summaries_key(std::string_view resource) { return resource == "meal" ? "meals" : resource; }

std::string summaries_body(std::string_view resource, std::string_view user_id, std::string_view provider,
                           int64_t start_ms, int64_t end_ms, size_t max_items) {
  std::string out = "{\"";
  out.append(summaries_key(resource));
  out.append("\":[");
  int64_t day = (start_ms + kDayMs - 1) / kDayMs * kDayMs;  // first midnight at or after start
  size_t count = 0;
  for (; day < end_ms && count < max_items; day += kDayMs, ++count) {
    if (count) out.push_back(',');
    append_summary(out, resource, user_id, provider, day);
  }
  out.append("]}");
  return out;
}

std::string profile_id(std::string_view user_id, std::string_view provider) {
  return stable_uuid("profile", user_id, static_cast<int64_t>(provider.size()));
}

std::string profile_body(std::string_view user_id, std::string_view provider) {
  std::string out;
  std::string source;
  json::ObjectWriter(source).string("provider", provider).string("type", "app").null("app_id").close();
  json::ObjectWriter(out)
      .string("id", profile_id(user_id, provider))
      .string("user_id", user_id)
      .integer("height", 178)
      .string("birth_date", "1988-09-14")
      .boolean("wheelchair_use", false)
      .string("gender", "female")
      .string("sex", "female")
      .raw("source", source)
      .string("created_at", "2024-01-02T10:00:00+00:00")
      .string("updated_at", "2024-04-09T19:12:45+00:00")
      .close();
  return out;
}

std::string providers_body() {
  return R"([{"name":"Oura","slug":"oura","description":"Smart ring for sleep and readiness",)"
         R"("logo":"https://storage.googleapis.com/vital-assets/oura.png","auth_type":"oauth",)"
         R"("supported_resources":["profile","sleep","activity","heartrate","hrv","workouts"]},)"
         R"({"name":"Garmin","slug":"garmin","description":"Watches and cycling computers",)"
         R"("logo":"https://storage.googleapis.com/vital-assets/garmin.png","auth_type":"oauth",)"
         R"("supported_resources":["activity","sleep","workouts","workout_stream","heartrate","steps"]},)"
         R"({"name":"Apple HealthKit","slug":"apple_health_kit","description":"Health data from iPhone and Apple Watch",)"
         R"("logo":"https://storage.googleapis.com/vital-assets/apple_health.png","auth_type":"sdk",)"
         R"("supported_resources":["steps","heartrate","sleep","meal","water"]},)"
         R"({"name":"Manual","slug":"manual","description":"Entered by hand","logo":null,"auth_type":null}])";
}

int64_t sample_time_ms(int64_t start_ms, int64_t end_ms, size_t index, size_t total) {
  const int64_t span = std::max<int64_t>(1, end_ms - start_ms);
  const int64_t step = std::max<int64_t>(1000, span / static_cast<int64_t>(std::max<size_t>(1, total)) / 1000 * 1000);
  return start_ms + static_cast<int64_t>(index) * step;
}

std::string grouped_body(std::string_view resource, std::string_view provider, int64_t start_ms, int64_t end_ms,
                         size_t page, size_t pages, size_t per_page, std::optional<size_t> last_points_to) {
  std::string source;
  json::ObjectWriter(source)
      .string("provider", provider)
      .string("type", "watch")
      .null("app_id")
      .null("device_id")
      .null("sport")
      .null("workout_id")
      .close();
  std::string out = "{\"groups\":{";
  json::append_string(out, provider);
  out.append(":[{\"source\":");
  out.append(source);
  out.append(",\"data\":[");
  const bool interval = is_interval_resource(resource);
  const size_t total = pages * per_page;
  for (size_t k = 0; k < per_page; ++k) {
    const size_t index = page * per_page + k;
    const int64_t t = sample_time_ms(start_ms, end_ms, index, total);
    if (k) out.push_back(',');
    json::ObjectWriter sample(out);
    sample.string("timestamp", service_time(t)).integer("timezone_offset", 7200).null("type");
    sample.string("unit", unit_of(resource));
    if (interval) sample.string("start", service_time(t)).string("end", service_time(t + 60'000));
    if (resource == "blood_pressure") {
      sample.integer("systolic", 110 + static_cast<int64_t>(index % 20))
          .integer("diastolic", 70 + static_cast<int64_t>(index % 10));
    } else {
      sample.integer("value", 50 + static_cast<int64_t>(index % 70));
    }
    sample.close();
  }
  out.append("]}]},\"next_cursor\":");
  if (page + 1 < pages) {
    json::append_string(out, make_cursor(page + 1));
  } else if (last_points_to) {
    json::append_string(out, make_cursor(*last_points_to));
  } else {
    out.append("null");
  }
  out.push_back('}');
  return out;
}

std::string make_cursor(size_t page) { return base64_encode("{\"offset\":" + std::to_string(page) + "}"); }

size_t parse_cursor(std::string_view cursor) {
  const auto decoded = base64_decode(cursor);
  if (!decoded || !decoded->starts_with("{\"offset\":") || !decoded->ends_with("}")) return SIZE_MAX;
  const std::string_view digits = std::string_view(*decoded).substr(10, decoded->size() - 11);
  size_t page = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), page);
  if (ec != std::errc() || end != digits.data() + digits.size()) return SIZE_MAX;
  return page;
}

std::string gzip(const std::string& input, int level) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, input.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  z.avail_in = static_cast<uInt>(input.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace hh::fake
