#pragma once
// The requests one load-generator run sends, decided before the clock starts: which body
// each carries, its message id, whether it is a retry of an earlier id or signed wrongly
// on purpose. Bodies are built once into a pool and shared; request i sends its own id.
// A run that outlasts the plan goes round it again (request(i)), each round with message
// ids of its own, so a long run at a high rate never runs out of requests.
//
// Signing: up front (a fixed timestamp, no HMAC on the clock) or, for runs longer than
// the receiver's timestamp tolerance (default 300 s), at send time.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace hh::bench {

struct PlanOptions {
  std::string kind = "sleep";      // sleep | heartrate | mixed | get (no body, unsigned)
  size_t count = 0;                // requests
  size_t body_pool = 2048;         // distinct bodies per kind
  int users = 64;                  // heartrate: series the batches rotate over
  int first_user = 0;              // heartrate: the first one's number (two loadgens, two sets of users)
  int versions = 1;                // sleep: versions of each summary, sent in shuffled order
  double heartrate_share = 0.1;    // mixed: share of heartrate batches
  double dup_ratio = 0;            // share of requests that resend an earlier id (retries)
  double bad_signature_ratio = 0;  // share signed wrongly on purpose (a 401 is expected)
  std::string id_prefix;
  bool sign_at_send = false;
};

struct PlannedRequest {
  std::string id;
  std::string timestamp;              // empty until signed
  std::string signature;
  const std::string* body = nullptr;  // null: a GET without a body
  uint32_t samples = 0;               // samples the body carries (heartrate)
  bool bad_signature = false;         // the expected answer is 401
};

class RequestPlan {
 public:
  RequestPlan(const PlanOptions& options, std::string secret, std::mt19937_64& random);
  RequestPlan(const RequestPlan&) = delete;
  RequestPlan& operator=(const RequestPlan&) = delete;

  std::vector<PlannedRequest>& requests() { return requests_; }
  // Request number `i` of the run: the plan's request i, or past the plan's end, request
  // i % size with the round appended to its id ("_r2"); a retry in a round resends an id
  // of that round. A recycled request must be signed again (its id changed).
  PlannedRequest request(size_t i) const;
  // Signs (or re-signs) `request` with timestamp `now_s`; a bad_signature request gets a
  // well-formed signature that does not match.
  void sign(PlannedRequest& request, int64_t now_s) const;
  size_t first_body_size() const;
  size_t distinct_bodies() const { return sleep_bodies_.size() + heartrate_bodies_.size(); }

 private:
  std::string secret_;
  std::vector<std::string> sleep_bodies_;      // not resized after construction: requests point into them
  std::vector<std::string> heartrate_bodies_;
  std::vector<uint32_t> heartrate_samples_;
  std::vector<PlannedRequest> requests_;
};

}  // namespace hh::bench
