#pragma once
// Inflates a gzip (RFC 1952) response body as it arrives, so only the decoded body is
// held in full: zlib's 32 KiB window plus one output chunk at a time.
#include <zlib.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hh::fetcher {

class GzipDecoder {
 public:
  GzipDecoder();
  ~GzipDecoder();
  GzipDecoder(const GzipDecoder&) = delete;
  GzipDecoder& operator=(const GzipDecoder&) = delete;

  // Inflates `input`, appending to `out`. Fails on corrupt data, or when `out` would grow
  // past `limit` bytes (a small gzip body can decode to gigabytes). Concatenated gzip
  // members are decoded one after the other.
  Result<void> feed(std::string_view input, std::string& out, size_t limit);
  // True once the (last) member ended with a valid trailer.
  bool finished() const { return finished_; }

 private:
  z_stream stream_{};
  bool initialised_ = false;
  bool finished_ = false;
};

}  // namespace hh::fetcher
