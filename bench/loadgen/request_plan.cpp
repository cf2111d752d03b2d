#include "bench/loadgen/request_plan.h"

#include <algorithm>
#include <chrono>

#include "bench/loadgen/bodies.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::bench {

namespace {
constexpr int kHeartrateSamples = 180;  // ~20 KiB
constexpr int64_t kWindowStepMinutes = 120;  // a third of each batch overwrites its user's previous one
}  // namespace

RequestPlan::RequestPlan(const PlanOptions& o, std::string secret, std::mt19937_64& random) : secret_(std::move(secret)) {
  const bool sleep = o.kind == "sleep" || o.kind == "mixed";
  const bool heartrate = o.kind == "heartrate" || o.kind == "mixed";
  if (sleep) {
    // Summaries in groups of `versions` bodies, each group's versions shuffled: sending
    // the pool in order delivers every summary's versions out of order.
    const int versions = std::max(1, o.versions);
    const uint64_t first_summary = random() % 1000000000000ull;
    std::vector<uint64_t> order(static_cast<size_t>(versions));
    sleep_bodies_.reserve(o.body_pool);
    for (size_t b = 0; b < o.body_pool; b += order.size()) {
      for (size_t v = 0; v < order.size(); ++v) order[v] = v;
      std::shuffle(order.begin(), order.end(), random);
      for (size_t v = 0; v < order.size() && sleep_bodies_.size() < o.body_pool; ++v) {
        sleep_bodies_.push_back(versions == 1 ? sleep_summary_body(random())
                                              : sleep_summary_version_body(first_summary + b / order.size(), order[v]));
      }
    }
  }
  if (heartrate) {
    // Batches of 180 minutes advancing by 120 per batch of a user.
    heartrate_bodies_.reserve(o.body_pool);
    for (size_t b = 0; b < o.body_pool; ++b) {
      const int user = o.first_user + static_cast<int>(b % static_cast<size_t>(o.users));
      const int64_t window = static_cast<int64_t>(b / static_cast<size_t>(o.users));
      heartrate_bodies_.push_back(heartrate_body(random(), user, window * kWindowStepMinutes, kHeartrateSamples));
      heartrate_samples_.push_back(kHeartrateSamples);
    }
  }

  const auto now_s =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::uniform_real_distribution<double> coin(0, 1);
  size_t next_sleep = 0, next_heartrate = 0;
  requests_.reserve(o.count);
  for (size_t i = 0; i < o.count; ++i) {
    if (o.kind == "get") {
      requests_.emplace_back();
      continue;
    }
    if (i > 0 && coin(random) < o.dup_ratio) {
      requests_.push_back(requests_[std::uniform_int_distribution<size_t>(0, i - 1)(random)]);  // a retry
      continue;
    }
    PlannedRequest& r = requests_.emplace_back();
    r.id = o.id_prefix + std::to_string(i);
    const bool send_heartrate = heartrate && (!sleep || coin(random) < o.heartrate_share);
    if (send_heartrate) {
      const size_t b = next_heartrate++ % heartrate_bodies_.size();
      r.body = &heartrate_bodies_[b];
      r.samples = heartrate_samples_[b];
    } else {
      r.body = &sleep_bodies_[next_sleep++ % sleep_bodies_.size()];
    }
    r.bad_signature = coin(random) < o.bad_signature_ratio;
    if (!o.sign_at_send) sign(r, now_s);
  }
}

PlannedRequest RequestPlan::request(size_t i) const {
  PlannedRequest r = requests_[i % requests_.size()];
  if (const size_t round = i / requests_.size(); round > 0 && r.body) r.id += "_r" + std::to_string(round);
  return r;
}

void RequestPlan::sign(PlannedRequest& r, int64_t now_s) const {
  if (!r.body) return;
  r.timestamp = std::to_string(now_s);
  r.signature = signature::sign(secret_, r.id, r.timestamp, *r.body).value();
  // "v1,<base64>": change the first base64 character, keeping the header well-formed.
  if (r.bad_signature && r.signature.size() > 3) r.signature[3] = r.signature[3] == 'A' ? 'B' : 'A';
}

size_t RequestPlan::first_body_size() const {
  if (!sleep_bodies_.empty()) return sleep_bodies_.front().size();
  if (!heartrate_bodies_.empty()) return heartrate_bodies_.front().size();
  return 0;
}

}  // namespace hh::bench
