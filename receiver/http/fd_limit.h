#pragma once
// The process's file-descriptor limit and how many connections fit in it (spec §2:
// max_connections is lowered to fit, with a warning, never a refusal to start).
#include <cstdint>
#include <string>

namespace hh::http {

// Descriptors kept for everything but client connections and the sockets serve opens
// itself (connections_that_fit's `outgoing`): the database and its WAL and SHM on several
// connections, the listening socket, logs.
inline constexpr uint64_t kReservedDescriptors = 64;

struct DescriptorLimit {
  uint64_t soft = 0;       // after raising it
  uint64_t hard = 0;
  bool raised = false;     // the soft limit was below the hard one and was raised
  std::string error;       // why it could not be read or raised ("" when fine)
};

// Raises the soft RLIMIT_NOFILE to the hard limit (allowed without privileges).
DescriptorLimit raise_descriptor_limit();

// How many client connections fit in `limit` (at least 1), beside kReservedDescriptors
// and `outgoing` sockets the process opens itself (forwarding's POSTs, the fetcher's).
uint64_t connections_that_fit(const DescriptorLimit& limit, uint64_t outgoing = 0);

}  // namespace hh::http
