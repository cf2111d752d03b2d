// Fuzzes signature verification with attacker-controlled headers and body: the input is
// "id\ntimestamp\nsignature-header\nbody". Must never crash, and must never accept a
// signature the fuzzer made up (it cannot know the secret).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "receiver/signature/webhook_signature.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto verifier = [] {
    const std::string secrets[] = {"whsec_plJ3nmyCDGBKInavdOK15jsl", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"};
    return hh::signature::Verifier::create(secrets, 300).value();
  }();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view parts[4];
  for (int i = 0; i < 3; ++i) {
    const auto nl = input.find('\n');
    parts[i] = input.substr(0, nl);
    input = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
  }
  parts[3] = input;
  const auto verdict = verifier->verify({parts[0], parts[1], parts[2]}, parts[3], 1731705121);
  // The public vector (in the seeds) is the only valid signature the fuzzer can hold.
  if (verdict == hh::signature::Verdict::ok && parts[0] != "msg_loFOjxBNrRLzqYUf") std::abort();
  (void)hh::signature::verdict_reason(verdict);
  return 0;
}
