#pragma once
// Which signature headers of a request to verify with (spec §2): the svix-* set when all
// three are present, else the webhook-* set when all three are present, else none (401).
// So a complete set is verified even beside a stray header of the other family, as the
// Standard Webhooks libraries do.
//
// A header may be repeated. Repeated signature headers are one list of entries (their
// values joined with a space, as the inbox stores them), so a request verifies the same
// live and in replay. A repeated id or timestamp must repeat the same value; different
// values make the set ambiguous, and the request is refused as malformed.
#include <array>
#include <string>
#include <string_view>

#include "receiver/signature/webhook_signature.h"

namespace hh::signature {

enum class Family { svix, webhook };

class SignatureHeaderSet {
 public:
  // Feed every header of the request, in order (names compared case-insensitively;
  // headers that are not signature headers are ignored).
  void add(std::string_view name, std::string_view value);

  // The set to verify with. The views point into this object (or the values passed to
  // add()), so both must outlive the result.
  SignedHeaders pick() const;
  // Why pick() is unusable beyond what verify() sees (different repeated ids or
  // timestamps), or Verdict::ok.
  Verdict ambiguity() const;
  // The family pick() chose; svix when neither is complete.
  Family family() const;

  // True when `name` is a signature header whose repeated values are joined with a space.
  static bool is_signature_list(std::string_view name);

 private:
  struct Field {
    std::string_view first;
    std::string joined;        // a repeated signature header: every value, joined with ' '
    int count = 0;
    bool conflicting = false;  // a repeated id or timestamp with a different value
    std::string_view value() const { return joined.empty() ? first : std::string_view(joined); }
  };
  // [family][0 id, 1 timestamp, 2 signature]
  std::array<std::array<Field, 3>, 2> fields_;  // no {}: clang 14 crashes on that initializer
  bool complete(Family f) const;
};

}  // namespace hh::signature
