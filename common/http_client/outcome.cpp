#include "common/http_client/outcome.h"

namespace hh::http_client {

std::string_view failure_name(Failure failure) {
  switch (failure) {
    case Failure::none: return "none";
    case Failure::connect: return "connect";
    case Failure::certificate: return "certificate";
    case Failure::tls: return "tls";
    case Failure::timeout: return "timeout";
    case Failure::transport: return "transport";
    case Failure::too_large: return "too_large";
    case Failure::protocol: return "protocol";
    case Failure::cancelled: return "cancelled";
  }
  return "unknown";
}

std::string status_error(unsigned status, std::string_view excerpt) {
  while (!excerpt.empty() && excerpt.back() == ' ') excerpt.remove_suffix(1);
  std::string text = "HTTP " + std::to_string(status);
  if (!excerpt.empty()) text.append(": ").append(excerpt);
  return text;
}

}  // namespace hh::http_client
