#include "receiver/signature/signature_headers.h"

#include <strings.h>

namespace hh::signature {
namespace {

constexpr std::array<std::array<std::string_view, 3>, 2> kNames = {{
    {"svix-id", "svix-timestamp", "svix-signature"},
    {"webhook-id", "webhook-timestamp", "webhook-signature"},
}};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

bool SignatureHeaderSet::is_signature_list(std::string_view name) {
  return iequal(name, kNames[0][2]) || iequal(name, kNames[1][2]);
}

void SignatureHeaderSet::add(std::string_view name, std::string_view value) {
  if (name.size() < 7 || name.size() > 17) return;  // no signature header name is shorter or longer
  for (size_t f = 0; f < kNames.size(); ++f) {
    for (size_t part = 0; part < 3; ++part) {
      if (!iequal(name, kNames[f][part])) continue;
      Field& field = fields_[f][part];
      if (field.count++ == 0) {
        field.first = value;
      } else if (part == 2) {
        if (field.joined.empty()) field.joined = std::string(field.first);
        field.joined.push_back(' ');
        field.joined.append(value);
      } else if (value != field.first) {
        field.conflicting = true;
      }
      return;
    }
  }
}

bool SignatureHeaderSet::complete(Family f) const {
  const auto& set = fields_[static_cast<size_t>(f)];
  for (const Field& field : set) {
    if (field.value().empty()) return false;
  }
  return true;
}

Family SignatureHeaderSet::family() const {
  if (complete(Family::svix)) return Family::svix;
  if (complete(Family::webhook)) return Family::webhook;
  return Family::svix;
}

SignedHeaders SignatureHeaderSet::pick() const {
  if (!complete(Family::svix) && !complete(Family::webhook)) return {};  // missing_headers
  const auto& set = fields_[static_cast<size_t>(family())];
  return {set[0].value(), set[1].value(), set[2].value()};
}

Verdict SignatureHeaderSet::ambiguity() const {
  const auto& set = fields_[static_cast<size_t>(family())];
  if (set[0].conflicting) return Verdict::malformed_id;
  if (set[1].conflicting) return Verdict::malformed_timestamp;
  return Verdict::ok;
}

}  // namespace hh::signature
