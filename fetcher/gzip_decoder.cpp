#include "fetcher/gzip_decoder.h"

#include <climits>

namespace hh::fetcher {
namespace {
constexpr size_t kOutputChunk = 64 * 1024;
}  // namespace

GzipDecoder::GzipDecoder() {
  // 16 + MAX_WBITS: gzip framing only (zlib.h, inflateInit2).
  initialised_ = inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK;
}

GzipDecoder::~GzipDecoder() {
  if (initialised_) inflateEnd(&stream_);
}

Result<void> GzipDecoder::feed(std::string_view input, std::string& out, size_t limit) {
  if (!initialised_) return fail("gzip: zlib could not be initialised");
  while (!input.empty()) {
    if (finished_) {
      // Another member follows; anything else after the trailer is an error below.
      if (inflateReset(&stream_) != Z_OK) return fail("gzip: reset failed");
      finished_ = false;
    }
    const size_t in_now = std::min<size_t>(input.size(), UINT_MAX);
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    stream_.avail_in = static_cast<uInt>(in_now);
    do {
      if (out.size() >= limit) return fail("decoded body larger than the limit of " + std::to_string(limit) + " bytes");
      const size_t old_size = out.size();
      const size_t room = std::min(kOutputChunk, limit - old_size);
      out.resize(old_size + room);
      stream_.next_out = reinterpret_cast<Bytef*>(out.data() + old_size);
      stream_.avail_out = static_cast<uInt>(room);
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      out.resize(old_size + room - stream_.avail_out);
      if (rc == Z_STREAM_END) {
        finished_ = true;
        break;
      }
      if (rc == Z_BUF_ERROR) break;  // needs more input
      if (rc != Z_OK) {
        return fail(std::string("gzip: corrupt data (") + (stream_.msg ? stream_.msg : "inflate failed") + ")");
      }
    } while (stream_.avail_out == 0 || stream_.avail_in > 0);
    input.remove_prefix(in_now - stream_.avail_in);
  }
  return {};
}

}  // namespace hh::fetcher
