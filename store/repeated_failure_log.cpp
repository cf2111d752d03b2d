#include "store/repeated_failure_log.h"

#include "common/log.h"

namespace hh::store {

void RepeatedFailureLog::failed(const std::string& error, size_t batch) {
  constexpr auto kEvery = std::chrono::minutes(1);
  const auto now = std::chrono::steady_clock::now();
  ++in_a_row_;
  ++since_logged_;
  if (in_a_row_ > 1 && now - logged_at_ < kEvery) return;
  log::error(failed_event_)
      .str("error", error)
      .num("batch", static_cast<int64_t>(batch))
      .num("failures", since_logged_);  // since the last such line (1: this one)
  since_logged_ = 0;
  logged_at_ = now;
}

void RepeatedFailureLog::succeeded() {
  if (in_a_row_ == 0) return;
  log::info(recovered_event_).num("failures", in_a_row_);
  in_a_row_ = 0;
  since_logged_ = 0;
}

}  // namespace hh::store
