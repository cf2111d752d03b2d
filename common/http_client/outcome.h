#pragma once
// What one client operation (connection.h) came to, as a value: a failure class, the
// step it failed in and the error code. Nothing is formatted or allocated on the way;
// Connection::describe() makes the text when a caller wants one.
#include <boost/system/error_code.hpp>
#include <cstdint>
#include <string>
#include <string_view>

namespace hh::http_client {

enum class Failure : uint8_t {
  none,         // the operation succeeded (for a read: a response arrived, see its status)
  connect,      // name resolution or TCP connect failed or timed out, or the handshake timed out
  certificate,  // TLS peer verification failed (chain or host name): retrying will not help
  tls,          // any other TLS handshake failure
  timeout,      // no bytes within read_timeout while writing the request or reading the response
  transport,    // connection reset or closed before the response was complete
  too_large,    // response body over Options::max_body_bytes (or, for a caller's own check, its limit)
  protocol,     // malformed HTTP (or, for a caller's own check, an encoding it cannot decode)
  cancelled,    // close() was called while the operation was pending
};
// "none", "connect", "certificate", … (metric labels and job errors use these names).
std::string_view failure_name(Failure failure);

// Where an operation stopped.
enum class Step : uint8_t {
  resolve,    // looking the host name up
  connect,    // TCP connect
  handshake,  // TLS handshake and peer check
  write,      // sending the request
  wait,       // nothing of the response has arrived yet
  header,     // part of the response header has arrived
  body,       // the header is complete
};

struct Outcome {
  Failure failure = Failure::none;
  Step step = Step::write;
  boost::system::error_code code;
  long verify_result = 0;  // X509_V_OK unless failure == certificate

  bool ok() const { return failure == Failure::none; }
  // Failed before any byte of a response arrived: on a reused keep-alive connection this
  // is how a connection the server had closed meanwhile shows itself.
  bool nothing_received() const { return !ok() && (step == Step::write || step == Step::wait); }
};

// An answer's status as an error's text: "HTTP 500: <excerpt>" (the caller's excerpt of the
// body, printable), or "HTTP 500" when the excerpt is empty or blank, with no empty tail. The
// one wording of the fetcher's, the forwarder's and `replay --to`'s errors.
std::string status_error(unsigned status, std::string_view excerpt);

}  // namespace hh::http_client
