// Signature verification (spec §2, reference notes §4).
#include <boost/test/unit_test.hpp>

#include "receiver/signature/webhook_signature.h"

using namespace hh::signature;

namespace hh::signature {
std::ostream& operator<<(std::ostream& out, Verdict verdict) { return out << verdict_reason(verdict); }
}  // namespace hh::signature

BOOST_AUTO_TEST_SUITE(signature_test)

namespace {

// The public test vector from the Svix docs (reference notes §4).
const std::string kSecret = "whsec_plJ3nmyCDGBKInavdOK15jsl";
const std::string kId = "msg_loFOjxBNrRLzqYUf";
const std::string kTimestamp = "1731705121";
const std::string kBody = R"({"event_type":"ping","data":{"success":true}})";
const std::string kSignature = "v1,rAvfW3dJ/X/qxhsaXPOyyCGmRKsaKWcsNccKXlIktD0=";
constexpr int64_t kNow = 1731705121;

std::shared_ptr<const Verifier> verifier_for(std::vector<std::string> secrets, int64_t tolerance = 300) {
  auto v = Verifier::create(secrets, tolerance);
  BOOST_REQUIRE_MESSAGE(v.ok(), v.error());
  return *v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(public_vector_signs_and_verifies) {
  auto signature = sign(kSecret, kId, kTimestamp, kBody);
  BOOST_REQUIRE(signature.ok());
  BOOST_TEST(*signature == kSignature);
  BOOST_TEST(verifier_for({kSecret})->verify({kId, kTimestamp, kSignature}, kBody, kNow) == Verdict::ok);
}

BOOST_AUTO_TEST_CASE(any_matching_entry_of_several_passes) {
  const std::string header = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v1a,ed25519stuff " + kSignature;
  BOOST_TEST(verifier_for({kSecret})->verify({kId, kTimestamp, header}, kBody, kNow) == Verdict::ok);
}

// Any of the header's first 64 `v1,` entries may match (the 9th was ignored once).
BOOST_AUTO_TEST_CASE(a_match_after_many_wrong_entries_passes) {
  std::string header;
  for (int i = 0; i < 63; ++i) header += "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= ";
  BOOST_TEST(verifier_for({kSecret})->verify({kId, kTimestamp, header + kSignature}, kBody, kNow) == Verdict::ok);
  header += "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= ";  // the 65th is past the bound
  BOOST_TEST(verifier_for({kSecret})->verify({kId, kTimestamp, header + kSignature}, kBody, kNow) ==
             Verdict::no_matching_signature);
}

BOOST_AUTO_TEST_CASE(rotation_accepts_any_configured_secret) {
  const std::string other = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  auto v = verifier_for({other, kSecret});
  BOOST_TEST(v->verify({kId, kTimestamp, kSignature}, kBody, kNow) == Verdict::ok);
  auto signed_by_other = sign(other, kId, kTimestamp, kBody);
  BOOST_TEST(v->verify({kId, kTimestamp, *signed_by_other}, kBody, kNow) == Verdict::ok);
  BOOST_TEST(verifier_for({other})->verify({kId, kTimestamp, kSignature}, kBody, kNow) ==
             Verdict::no_matching_signature);
}

BOOST_AUTO_TEST_CASE(raw_bytes_matter) {
  auto v = verifier_for({kSecret});
  const std::string reformatted = R"({"event_type": "ping","data":{"success":true}})";
  BOOST_TEST(v->verify({kId, kTimestamp, kSignature}, reformatted, kNow) == Verdict::no_matching_signature);
  BOOST_TEST(v->verify({"msg_other", kTimestamp, kSignature}, kBody, kNow) == Verdict::no_matching_signature);
}

BOOST_AUTO_TEST_CASE(timestamp_tolerance_both_directions) {
  auto v = verifier_for({kSecret}, 300);
  BOOST_TEST(v->verify({kId, kTimestamp, kSignature}, kBody, kNow + 300) == Verdict::ok);
  BOOST_TEST(v->verify({kId, kTimestamp, kSignature}, kBody, kNow - 300) == Verdict::ok);
  BOOST_TEST(v->verify({kId, kTimestamp, kSignature}, kBody, kNow + 301) == Verdict::timestamp_too_old);
  BOOST_TEST(v->verify({kId, kTimestamp, kSignature}, kBody, kNow - 301) == Verdict::timestamp_in_future);
}

BOOST_AUTO_TEST_CASE(malformed_inputs_are_named) {
  auto v = verifier_for({kSecret});
  BOOST_TEST(v->verify({"", kTimestamp, kSignature}, kBody, kNow) == Verdict::missing_headers);
  BOOST_TEST(v->verify({kId, "", kSignature}, kBody, kNow) == Verdict::missing_headers);
  BOOST_TEST(v->verify({kId, kTimestamp, ""}, kBody, kNow) == Verdict::missing_headers);
  BOOST_TEST(v->verify({kId, "17317051x1", kSignature}, kBody, kNow) == Verdict::malformed_timestamp);
  BOOST_TEST(v->verify({kId, kTimestamp, "v2,abc"}, kBody, kNow) == Verdict::malformed_signature);
  BOOST_TEST(v->verify({kId, kTimestamp, "v1,not-base64!"}, kBody, kNow) == Verdict::malformed_signature);
  BOOST_TEST(v->verify({std::string(300, 'x'), kTimestamp, kSignature}, kBody, kNow) == Verdict::malformed_id);
}

BOOST_AUTO_TEST_CASE(bad_secrets_are_rejected_at_creation) {
  std::vector<std::string> bad{"whsec_***"};
  BOOST_TEST(!Verifier::create(bad, 300).ok());
  std::vector<std::string> none;
  BOOST_TEST(!Verifier::create(none, 300).ok());
}

BOOST_AUTO_TEST_CASE(verifiers_on_one_thread_do_not_share_keys) {
  // Per-thread contexts are cached per verifier; alternating must not mix keys up.
  auto a = verifier_for({kSecret});
  auto b = verifier_for({"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"});
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(a->verify({kId, kTimestamp, kSignature}, kBody, kNow) == Verdict::ok);
    BOOST_TEST(b->verify({kId, kTimestamp, kSignature}, kBody, kNow) == Verdict::no_matching_signature);
  }
}

BOOST_AUTO_TEST_SUITE_END()  // signature_test
