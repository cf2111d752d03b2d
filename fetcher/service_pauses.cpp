#include "fetcher/service_pauses.h"

namespace hh::fetcher {

void ServicePauses::pause(const HttpsClient& service, int64_t until_ms, std::string cause) {
  ServicePause& pause = pauses_[&service];
  if (until_ms > pause.until_ms) pause = ServicePause{until_ms, std::move(cause)};
}

const ServicePause* ServicePauses::active(const HttpsClient& service, int64_t now_ms) const {
  const auto found = pauses_.find(&service);
  return found != pauses_.end() && found->second.until_ms > now_ms ? &found->second : nullptr;
}

}  // namespace hh::fetcher
