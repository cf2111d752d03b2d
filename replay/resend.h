#pragma once
// `healthhook replay FILE… --to URL`: re-sends every capture line to a running receiver
// as the service would: the same message id and body, a fresh timestamp and a valid
// signature for it (so the receiver's tolerance check passes however old the capture),
// the captured headers otherwise (minus hop-by-hop ones and the old signature headers).
// The header family (svix-* or webhook-*) is the one the line was captured with.
//
// Concurrency: `concurrency` lanes, each one keep-alive HTTP/1.1 connection sending one
// request at a time. A delivery goes to the lane of its ordering key (ordering_key.h,
// the user), so one user's deliveries arrive in capture order and the receiver assigns
// them seqs in that order, which latest-wins needs; different users overtake each
// other. A delivery whose envelope and data name two users is sent alone, between the
// answers of everything before it and the sending of everything after it. `concurrency`
// 1 (the default) keeps the whole file's order: the receiver then numbers every delivery
// as offline replay does, and the tables match with their seqs and the change feed's order;
// with more, the derived rows match but seqs interleave users differently.
//
// Transport: https:// with the peer verified (common/http_client/tls_context.h), or plain
// http:// to a loopback host; plain http:// elsewhere only with allow_plain_http.
//
// A body of 1 MiB or more goes with "Expect: 100-continue": its head first, the body once
// the receiver answers 100 Continue (or has said nothing for a second), so that a receiver
// refusing it after the head (413 over max_body_bytes) is heard however large the body
// (it drops at most 64 MiB of a refused body before closing: a whole body written first
// failed with the answer unread). A smaller request whose write fails reads the answer
// the receiver may have sent before closing.
//
// Answers: 2xx is success (the body tells stored from duplicate). An answer that is final
// for its line (400 invalid, 401, 404, 413 too large) fails the line and the next one goes
// on. One that says "not now" (429, 5xx) is retried after its Retry-After (seconds or an
// HTTP date; 1 s when absent or unreadable; at most 30 s, up to 5 attempts); a connection
// that fails mid-request, sends no byte of an answer for 30 s, or has not given the whole
// final answer within `answer_timeout` of sending (a proxy sending 102 Processing forever,
// an answer trickled a byte at a time) is re-opened and the request sent again (at most 3
// times: safe, the receiver deduplicates by message id).
// When those retries are used up, when no connection can be made at all, and when the
// first 20 answers are all 401 (a secret the receiver does not hold), the run stops: a
// line sent after one that was not stored could store a later version of the same rows
// first, and the same command run again sends what was left in order (the lines before
// are duplicates). The connections are common/http_client/connection.h's.
//
// Memory: at most kLaneDepth deliveries per lane and kMaxQueuedBytes of bodies are read
// ahead of the network; a request's body is its delivery's, not a copy. Runs on the calling thread (its own io_context).
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "common/progress.h"
#include "common/result.h"
#include "replay/capture_file.h"
#include "replay/offline_replay.h"

namespace hh::replay {

struct ResendOptions {
  std::string url;     // https:// or http://host[:port][/path]; an empty path means /webhooks
  std::string secret;  // "whsec_…": signs every request
  size_t concurrency = 1;  // 1: the file's order, so the receiver's seqs are offline replay's
  // Plain http:// to a host that is not loopback sends health data unencrypted across a
  // network: refused unless this is set (a private network the operator trusts).
  bool allow_plain_http = false;
  std::string ca_file;  // https://: the CA that signed the receiver's certificate; empty: the system trust store
  // One attempt, from writing the request to the answer's last byte. The receiver answers
  // once the delivery is durable (milliseconds); this bounds a peer that never finishes.
  std::chrono::seconds answer_timeout{120};
};

struct ResendSummary {
  uint64_t lines = 0;       // lines read, malformed ones too (blank lines not counted)
  uint64_t answered = 0;    // got an HTTP answer (any status)
  uint64_t stored = 0;      // 2xx answers saying "stored"
  uint64_t duplicates = 0;  // 2xx answers saying "duplicate"
  uint64_t failed = 0;      // malformed lines, non-2xx answers, no answer
  uint64_t bodies_removed = 0;  // lines marked "body_removed" (retention): not sent
  std::map<unsigned, uint64_t> statuses;  // answers by status code
  bool stopped = false;  // the receiver could not be reached, kept refusing, or refused the secret: lines left unsent
  double seconds = 0;
};

// The URL's parts, or an error naming what is wrong with it (the URL shown without user
// information and query: http_url.h loggable_url). Plain http:// only to a loopback host
// (localhost, 127.0.0.0/8, ::1) unless `allow_plain_http`.
struct Target {
  bool tls = false;       // https://: the receiver's certificate and host name are verified
  std::string host;       // for name resolution ("::1", not "[::1]")
  uint16_t port = 80;
  std::string authority;  // for the Host header, as in the URL ("[::1]:8080")
  std::string path;  // with the query, if any
};
Result<Target> parse_target_url(std::string_view url, bool allow_plain_http = false);

// Sends every line of every reader, in order. Returns an error only for a failure that is
// nobody's line (the URL, name resolution); lines that fail are reported and counted.
Result<ResendSummary> resend(std::span<CaptureReader> readers, const ResendOptions& options, const LineReport& report,
                             Progress* progress);

}  // namespace hh::replay
