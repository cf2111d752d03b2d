#pragma once
// The customer's backend that push forwarding delivers to, faults included: a loopback
// HTTP/1.1 server (plain or TLS, keep-alive) that verifies each POST's Standard Webhooks
// signature (webhook-id / webhook-timestamp / webhook-signature), asks a fault plan what
// to answer, and records what it accepted, deduplicated by webhook-id as a real backend
// would. Blocking Beast on threads of its own: one accepts, one per connection, so a
// delayed answer on one connection does not hold up the others.
//
// For each request, in this order:
//   path other than Options::path       404 (method not POST: 405)
//   body over 16 MiB                    413, connection closed
//   signature missing or wrong          401, counted in bad_signatures(), not recorded
//   otherwise                           the plan's Fault: wait `delay`, then close without
//                                       answering (`drop`) or answer `status` (with the
//                                       Fault's `body`, written at once or a byte at a time:
//                                       `drip`); a 2xx is recorded in accepted() before its
//                                       answer is written (so a client that gives up on the
//                                       answer has still been applied, as with a real backend)
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hh::test {

// One request that passed the signature check.
struct BackendRequest {
  std::string id;                              // webhook-id
  std::string timestamp;                       // webhook-timestamp
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased; repeated ones joined with ", "
  size_t attempt = 0;       // how many signed requests with this id came before this one
  uint64_t connection = 0;  // which accepted connection it came on (1, 2, …): shows keep-alive
  bool duplicate = false;   // in accepted() only: a 2xx for an id that was already accepted
};

// What the backend does with one signed request.
struct BackendFault {
  unsigned status = 200;                   // 100–999; 204 and 304 get no body
  std::optional<std::string> retry_after;  // sent as Retry-After when set
  std::chrono::milliseconds delay{0};      // wait before answering (or dropping); stop() cuts it short
  bool drop = false;                       // close the connection without answering
  // The answer's body; none: a short JSON one ({"ok":true}, or {"error":"fault plan"}).
  std::optional<std::string> body;
  // Above zero: the answer is written one byte at a time, this long apart (a backend or a
  // proxy that trickles); stop() cuts it short. With drip_body_only the status line and
  // headers go at once and only the body trickles.
  std::chrono::milliseconds drip{0};
  bool drip_body_only = false;
  bool close = false;  // answer with "Connection: close" and close (no keep-alive)
};

class FakeBackend {
 public:
  using Request = BackendRequest;
  using Fault = BackendFault;
  // Called on the connection's thread, possibly on several at once, for every request that
  // passed the signature check, outside the backend's lock: it may call the getters and
  // set_plan(), or block (bounded) to line requests up, but not call stop() (which waits for
  // this thread). An exception from it answers 500.
  using Plan = std::function<Fault(const Request&)>;

  struct Options {
    uint16_t port = 0;     // 0: an ephemeral port. The listener sets SO_REUSEADDR, so a test
                           // can stop() a backend and start another on the same port.
    bool tls = false;      // https with a certificate for localhost and 127.0.0.1 by ca_pem()
    std::string secret;    // "whsec_<base64>": the signing secret the forwarder uses
    std::string path = "/hooks";
  };

  // Listens before returning (clients may connect at once). Throws when the secret is not
  // valid or the port cannot be bound.
  explicit FakeBackend(Options options);
  // stop().
  ~FakeBackend();
  FakeBackend(const FakeBackend&) = delete;
  FakeBackend& operator=(const FakeBackend&) = delete;

  // Replaces the plan; an empty one means the default, always 200. Requests already in
  // the plan finish with the old one.
  void set_plan(Plan plan);
  // Closes the listener and every connection, cutting delays short (those requests get no
  // answer and are not recorded), and waits for the backend's threads. Afterwards clients
  // get "connection refused". Idempotent; not from inside a Plan.
  void stop();

  uint16_t port() const;
  // "http://127.0.0.1:PORT/hooks", or "https://localhost:PORT/hooks" with TLS.
  std::string url() const;
  // PEM of the CA that signed the server certificate ("" without TLS): the client's trust
  // anchor.
  const std::string& ca_pem() const;

  // Every request that got a 2xx, in the order they were answered, duplicates included.
  std::vector<Request> accepted() const;
  size_t unique_accepted() const;
  std::set<std::string> accepted_ids() const;
  // 2xx answers for ids that had already been accepted.
  size_t duplicates() const;
  // Every request read whole, whatever was answered.
  size_t requests() const;
  size_t bad_signatures() const;
  // The most requests that were being handled (read, not yet answered) at the same time.
  size_t max_in_flight() const;
  size_t connections() const;  // accepted so far

  // Waits until unique_accepted() >= n; false when `timeout` passed first.
  bool wait_for_unique(size_t n, std::chrono::milliseconds timeout) const;
  // The same for sends of thousands, whose rate is the machine's (under the sanitizers, on
  // a CI machine running four tests on two cores): waits as long as new ids keep coming.
  // False when none came for `stall`, or `bound` passed first.
  bool wait_for_unique_while_coming(size_t n, std::chrono::milliseconds stall, std::chrono::milliseconds bound) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hh::test
