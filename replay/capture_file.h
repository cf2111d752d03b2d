#pragma once
// The capture file: the one place its format is written and read (spec §6).
//
// JSON Lines, UTF-8, one delivery per line:
//
//   file       = *( line EOL ) [ line ]          EOL = LF / CRLF
//   line       = blank / delivery                 blank lines (only spaces/tabs) are skipped
//   delivery   = a JSON object with these members, in any order:
//     "id"          string, 1–256 bytes            the message id (svix-id / webhook-id),
//                                                    when its bytes are valid UTF-8
//     "id_base64"   string, RFC 4648 §4 base64     the message id's bytes otherwise
//     "timestamp"   integer 0…253402300799         the signed webhook timestamp, Unix seconds
//                   (or a string of digits, as       (deliveries.webhook_timestamp)
//                   the header carries it)
//     "headers"     object of string values        the request headers as received, in their
//                   (optional, default {})          order (deliveries.headers)
//     "body"        string                         the raw body, when its bytes are valid UTF-8
//     "body_base64" string, RFC 4648 §4 base64     the raw body bytes otherwise
//                   with padding
//     "body_removed" object                        retention removed the body (spec §11):
//                   {"removed_at_ms": integer,       the line records the delivery, but it
//                    "sha256": hex string}           cannot be replayed (replay counts and
//                                                    skips it; headers are {} then)
//   Exactly one of "id" and "id_base64"; exactly one of "body", "body_base64" and "body_removed". A member given twice is an
//   error. Other members are ignored, so later versions can add some.
//
// Written as {"id":… (or "id_base64"),"timestamp":…,"headers":{…},"body":…} (or "body_base64", or
// "body_removed"), compact, members in that order, ending with LF; a line is at most
// kMaxLineBytes long.
//
// What a capture holds: webhook deliveries only. Rows the fetcher stored (origin 'fetch')
// are responses to our own requests, not deliveries: they have no signature, cannot be
// re-sent to a receiver, and a replay re-creates them by queueing the same follow-up jobs
// (the next `serve` fetches them). So capture has no option to include them.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hh::replay {

// A capture line longer than this is reported as malformed (and skipped): a body at the
// default 4 MiB limit is at most ~24 MiB as an escaped JSON string. Offline replay sets a
// lower limit from max_body_bytes (CaptureReader::limit_line_bytes).
inline constexpr size_t kMaxLineBytes = 256 * 1024 * 1024;

struct CaptureHeader {
  std::string name;
  std::string value;
};

// One delivery of a capture file. Reused from line to line (buffers keep their capacity).
struct CaptureRecord {
  std::string id;
  int64_t timestamp = 0;
  std::vector<CaptureHeader> headers;
  std::string body;  // raw bytes (decoded from body or body_base64)
  bool body_removed = false;  // "body_removed": nothing to replay
};

// Appends one line (with its LF) for a delivery.
void append_capture_line(std::string& out, std::string_view id, int64_t timestamp,
                         std::span<const CaptureHeader> headers, std::string_view body);

// Appends the line of a delivery whose body retention removed.
void append_removed_capture_line(std::string& out, std::string_view id, int64_t timestamp, int64_t removed_at_ms,
                                 std::string_view body_sha256);

// The headers as stored in the inbox: a compact JSON object {"name":"value",…}.
void append_headers_json(std::string& out, std::span<const CaptureHeader> headers);

// Parses capture lines and header objects with simdjson On-Demand. One per thread; reused.
class CaptureParser {
 public:
  CaptureParser();
  ~CaptureParser();
  CaptureParser(const CaptureParser&) = delete;
  CaptureParser& operator=(const CaptureParser&) = delete;

  // Parses one line (without its EOL) into `record`. `line` may be padded in place (its
  // capacity grows by simdjson's padding). The error names the member: "body_base64: not
  // valid base64".
  Result<void> parse_line(std::string& line, CaptureRecord& record);

  // Parses a JSON object of string values (deliveries.headers) into `headers`.
  Result<void> parse_headers(std::string_view json, std::vector<CaptureHeader>& headers);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a capture file line by line with a fixed-size buffer: memory is bounded by the
// longest line, whatever the file's length.
class CaptureReader {
 public:
  // `path` "-" reads standard input. Reads the first chunk: a file that starts as a
  // compressed one (gzip, zstd, xz) or holds a NUL byte in its first line is refused
  // ("FILE: not a capture file: gzip-compressed? use zcat FILE | healthhook replay -").
  static Result<CaptureReader> open(const std::string& path);
  CaptureReader(CaptureReader&&) noexcept;
  CaptureReader& operator=(CaptureReader&&) noexcept;
  ~CaptureReader();

  enum class Next { record, bad_line, end };
  // record: `record` holds the delivery of line line_number(). bad_line: `error` says why
  // the line was skipped; reading can go on. end: no more lines. A read error of the file
  // itself is returned as an error (reading cannot go on).
  Result<Next> next(CaptureRecord& record, std::string& error);

  // A line longer than `bytes` (at most kMaxLineBytes) is reported as a bad line, with
  // `reason` after "line longer than N bytes", and skipped without being kept whole in
  // memory: at most `bytes` of it are.
  void limit_line_bytes(size_t bytes, std::string reason);

  uint64_t line_number() const;     // of the line last returned (1-based)
  uint64_t bytes_consumed() const;  // for progress
  const std::string& name() const;  // for messages: the path, or "<stdin>"

 private:
  struct Impl;
  explicit CaptureReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hh::replay
