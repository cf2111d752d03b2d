#pragma once
// One kind of failure that repeats while its cause lasts (a full disk refusing every
// commit, a WAL fsync that failed for good), logged as a few lines, not one per batch: the
// service retries every refused delivery, and a line each would flood the journal. The
// first failure of a run is logged at once, then one line a minute with the count since
// the last line, then one line when it succeeds again. Used from one thread only.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hh::store {

class RepeatedFailureLog {
 public:
  // `failed_event` at error level with the error; `recovered_event` at info level.
  RepeatedFailureLog(std::string_view failed_event, std::string_view recovered_event)
      : failed_event_(failed_event), recovered_event_(recovered_event) {}

  void failed(const std::string& error, size_t batch);
  void succeeded();

 private:
  std::string_view failed_event_, recovered_event_;  // string literals
  int64_t in_a_row_ = 0;
  int64_t since_logged_ = 0;
  std::chrono::steady_clock::time_point logged_at_{};
};

}  // namespace hh::store
