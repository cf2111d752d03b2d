#include "events/known_resources.h"

#include <algorithm>
#include <array>

namespace hh::events {

namespace {

// Reference notes §1: summary, discrete timeseries, interval timeseries; plus the
// deprecated hypnogram. workout_stream is a summary event's resource but no summary row.
constexpr std::array<std::string_view, 9> kSummaries = {
    "activity", "sleep", "sleep_cycle", "workouts", "body", "meal", "menstrual_cycle", "electrocardiogram", "profile"};
constexpr std::array<std::string_view, 52> kOtherResources = {
    "workout_stream",
    // discrete timeseries
    "respiratory_rate", "blood_oxygen", "blood_pressure", "glucose", "heartrate", "hrv", "electrocardiogram_voltage",
    "stress_level", "fat", "weight", "cholesterol", "ige", "igg",
    // interval timeseries
    "calories_active", "calories_basal", "distance", "floors_climbed", "steps", "workout_duration", "fall",
    "wheelchair_push", "stand_duration", "stand_hour", "body_temperature", "body_temperature_delta",
    "insulin_injection", "waist_circumference", "body_mass_index", "lean_body_mass", "basal_body_temperature",
    "afib_burden", "heart_rate_alert", "forced_expiratory_volume_1", "forced_vital_capacity",
    "peak_expiratory_flow_rate", "inhaler_usage", "heart_rate_recovery_one_minute", "vo2_max", "carbohydrates",
    "caffeine", "water", "mindfulness_minutes", "sleep_apnea_alert", "sleep_breathing_disturbance", "uv_exposure",
    "daylight_exposure", "handwashing", "workout_distance", "workout_swimming_stroke", "note",
    // deprecated
    "hypnogram"};

template <size_t N>
bool listed(const std::array<std::string_view, N>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

}  // namespace

bool is_known_resource(std::string_view resource) {
  return listed(kSummaries, resource) || listed(kOtherResources, resource);
}

bool is_summary_resource(std::string_view resource) { return listed(kSummaries, resource); }

std::optional<rows::Family> unshown_resource_family(std::string_view resource) {
  if (resource == "sleep_stream") return rows::Family::sleep_stream;
  if (resource == "match_review") return rows::Family::match_review;
  if (resource == "device_legacy") return rows::Family::device_legacy;
  if (resource == "connection") return rows::Family::connection;
  if (resource == "order") return rows::Family::lab_order;
  if (resource == "result") return rows::Family::lab_result;
  if (resource == "appointment") return rows::Family::lab_appointment;
  if (resource == "device") return rows::Family::device;
  return std::nullopt;
}

}  // namespace hh::events
