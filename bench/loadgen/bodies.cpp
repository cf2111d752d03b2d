#include "bench/loadgen/bodies.h"

#include <cstdio>

#include "common/timestamp.h"

namespace hh::bench {

namespace {

// The sleep summary template: data.id ends in `summary_id`, the user id in `user`.
std::string sleep_body(uint64_t user, uint64_t summary_id, uint64_t score, uint64_t updated_minute) {
  char buf[2048];
  const int n = std::snprintf(
      buf, sizeof buf,
      R"({"event_type":"daily.data.sleep.updated","user_id":"4a29dbc7-6db3-4c83-bfac-%012llu","client_user_id":"01HW3FSNVCHC3B2QB5N0ZAAAVG","team_id":"6b74423d-0504-4470-9afb-477252ccf67a","data":{"id":"b5b0b6a4-7c0e-4d5b-9d9f-%012llu","user_id":"4a29dbc7-6db3-4c83-bfac-%012llu","date":"2024-05-16T00:00:00+00:00","calendar_date":"2024-05-16","bedtime_start":"2024-05-15T22:41:00+01:00","bedtime_stop":"2024-05-16T06:58:00+01:00","timezone_offset":3600,"type":"long_sleep","duration":29820,"total":27120,"awake":2700,"light":14220,"rem":6360,"deep":6540,"score":%llu,"recovery_readiness_score":78,"hr_lowest":48,"hr_average":56,"hr_resting":51,"efficiency":0.91,"latency":540,"temperature_delta":-0.12,"skin_temperature":34.1,"hr_dip":0.14,"average_hrv":61,"respiratory_rate":14.5,"state":"confirmed","sleep_stream":null,"source":{"provider":"oura","type":"ring","app_id":null,"device_id":null,"sport":null,"workout_id":null,"name":"Oura","slug":"oura","logo":"https://storage.googleapis.com/vital-assets/oura.png"},"created_at":"2024-05-16T07:12:09+00:00","updated_at":"2024-05-16T%02llu:%02llu:09+00:00"}})",
      static_cast<unsigned long long>(user), static_cast<unsigned long long>(summary_id),
      static_cast<unsigned long long>(user), static_cast<unsigned long long>(score),
      static_cast<unsigned long long>(7 + updated_minute / 60 % 17), static_cast<unsigned long long>(updated_minute % 60));
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

std::string sleep_summary_body(uint64_t variant) {
  return sleep_body(variant % 1000, variant, 60 + variant % 40, 12);
}

std::string sleep_summary_version_body(uint64_t summary, uint64_t version) {
  return sleep_body(summary % 1000, summary, 60 + (summary + version) % 40, 12 + version);
}

std::string heartrate_body(uint64_t variant, int user, int64_t first_minute, int samples) {
  std::string body;
  body.reserve(static_cast<size_t>(samples) * 112 + 512);
  char user_id[64];
  std::snprintf(user_id, sizeof user_id, "5d3c7f1e-2a4b-4c6d-8e9f-%012d", user);
  body += R"({"event_type":"daily.data.heartrate.created","user_id":")";
  body += user_id;
  body += R"(","client_user_id":"01HW3FSNVCHC3B2QB5N0ZAAAVG","team_id":"6b74423d-0504-4470-9afb-477252ccf67a","data":{"data":[)";
  const int64_t base_ms = 1704067200000;  // 2024-01-01T00:00:00Z
  for (int i = 0; i < samples; ++i) {
    if (i) body.push_back(',');
    // Local time with a +01:00 offset, as Apple HealthKit sends it.
    std::string ts = format_rfc3339_ms(base_ms + (first_minute + i) * 60000 + 3600000);
    ts.resize(19);
    char sample[160];
    const int n = std::snprintf(sample, sizeof sample,
                                R"({"id":null,"timestamp":"%s+01:00","timezone_offset":3600,"type":null,"unit":"bpm","value":%d})",
                                ts.c_str(), 55 + static_cast<int>((variant + static_cast<uint64_t>(i) * 7) % 60));
    body.append(sample, static_cast<size_t>(n));
  }
  body += R"(],"source_id":16,"source":{"provider":"apple_health_kit","type":"watch","app_id":null,"device_id":null,"name":"Apple HealthKit","slug":"apple_health_kit","logo":"https://storage.googleapis.com/vital-assets/apple_health.png"},"user_id":")";
  body += user_id;
  body += R"("}})";
  return body;
}

}  // namespace hh::bench
