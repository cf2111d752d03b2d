#include "receiver/http/fd_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace hh::http {

DescriptorLimit raise_descriptor_limit() {
  DescriptorLimit out;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    out.error = std::strerror(errno);
    return out;
  }
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      limit = raised;
      out.raised = true;
    } else {
      out.error = std::strerror(errno);
    }
  }
  out.soft = limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_cur);
  out.hard = limit.rlim_max == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_max);
  return out;
}

uint64_t connections_that_fit(const DescriptorLimit& limit, uint64_t outgoing) {
  const uint64_t reserved = kReservedDescriptors + outgoing;
  if (limit.soft <= reserved + 1) return 1;
  return limit.soft - reserved;
}

}  // namespace hh::http
