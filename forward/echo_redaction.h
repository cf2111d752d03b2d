#pragma once
// What a destination's answer may echo back that no log line or stored message may repeat
// (spec §10, README "Forwarding to your backend"): the URL's query, which may hold a token
// (many frameworks' error pages print the request's URL whole), and the destination's
// secret (which the backend has too). The start of an error answer's body is kept in the
// log and in the outbox's last_error: it passes through here first.
#include <string>
#include <string_view>
#include <vector>

#include "common/http_url.h"
#include "common/redaction.h"

namespace hh::forward {

class EchoRedaction {
 public:
  EchoRedaction(const HttpUrl& url, std::string_view secret);

  // `text` with every occurrence of what must not be repeated replaced by "[redacted]",
  // also JSON-escaped (common/redaction.h).
  std::string apply(std::string_view text, TextEnd end) const;
  // The most bytes one hidden string may take written out (JSON-escaped): text cut after
  // this many more bytes than it keeps cannot show the start of one that apply() would
  // have hidden whole.
  size_t longest() const { return longest_; }

 private:
  std::vector<std::string> hidden_;  // longest first, each once
  size_t longest_ = 0;
};

}  // namespace hh::forward
