#include "fetcher/service_values.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace hh::fetcher {
namespace {

template <size_t N>
bool listed(const std::array<std::string_view, N>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Service interface, "Provider (item of the provider list)": supported_resources values.
constexpr std::array<std::string_view, 69> kResources = {
    "profile", "activity", "sleep", "body", "workouts", "workout_stream", "connection", "order", "result",
    "match_review", "appointment", "glucose", "heartrate", "hrv", "ige", "igg", "blood_oxygen", "blood_pressure",
    "cholesterol", "device", "device_legacy", "weight", "fat", "body_temperature", "body_temperature_delta", "meal",
    "water", "caffeine", "mindfulness_minutes", "steps", "calories_active", "distance", "floors_climbed",
    "respiratory_rate", "vo2_max", "calories_basal", "stress_level", "menstrual_cycle", "sleep_cycle",
    "electrocardiogram", "electrocardiogram_voltage", "afib_burden", "heart_rate_alert", "stand_hour",
    "stand_duration", "sleep_apnea_alert", "sleep_breathing_disturbance", "wheelchair_push",
    "forced_expiratory_volume_1", "forced_vital_capacity", "peak_expiratory_flow_rate", "inhaler_usage", "fall",
    "uv_exposure", "daylight_exposure", "handwashing", "basal_body_temperature", "heart_rate_recovery_one_minute",
    "body_mass_index", "lean_body_mass", "waist_circumference", "workout_distance", "workout_swimming_stroke",
    "workout_duration", "insulin_injection", "carbohydrates", "note", "sleep_stream", "hypnogram"};

// The listed resources that name records, not data (webhook reference §1 lists no
// historical.data.* event for them).
constexpr std::array<std::string_view, 7> kRecordResources = {
    "connection", "order", "result", "match_review", "appointment", "device", "device_legacy"};

// Service interface, DELETE /v2/user/{user_id}/{provider}: the `provider` enum.
constexpr std::array<std::string_view, 40> kProviders = {
    "oura", "fitbit", "garmin", "whoop", "strava", "renpho", "peloton", "wahoo", "zwift", "freestyle_libre",
    "abbott_libreview", "tandem_source", "freestyle_libre_ble", "eight_sleep", "withings", "apple_health_kit",
    "manual", "ihealth", "google_fit", "beurer_api", "beurer_ble", "omron", "omron_ble", "onetouch_ble",
    "accuchek_ble", "contour_ble", "dexcom", "dexcom_v3", "hammerhead", "my_fitness_pal", "health_connect",
    "samsung_health", "polar", "cronometer", "kardia", "whoop_v2", "ultrahuman", "my_fitness_pal_v2",
    "map_my_fitness", "runkeeper"};

}  // namespace

bool is_listed_resource(std::string_view resource) { return listed(kResources, resource); }

bool is_record_resource(std::string_view resource) { return listed(kRecordResources, resource); }

bool is_listed_provider(std::string_view provider) { return listed(kProviders, provider); }

std::string endless_pages_error(int64_t max_pages, std::string_view cursor_name) {
  return "more than " + std::to_string(max_pages) + " pages, each with a new " + std::string(cursor_name) +
         ": the service's pages never end";
}

}  // namespace hh::fetcher
