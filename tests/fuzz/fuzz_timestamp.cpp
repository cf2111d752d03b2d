// Fuzzes the ISO 8601 parser; property: whatever parses formats back to the same instant.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/timestamp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto ms = hh::parse_iso8601_ms(text);
  if (ms) {
    const auto again = hh::parse_iso8601_ms(hh::format_rfc3339_ms(*ms));
    if (!again || *again != *ms) std::abort();
  }
  (void)hh::parse_time_bound_ms(text);
  return 0;
}
