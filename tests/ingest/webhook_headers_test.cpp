// What the inbox keeps of a request's headers, and which signature headers are verified
// (spec §2: a complete set of either family, repeated headers the same live and in replay).
#include <boost/test/unit_test.hpp>

#include "receiver/http/webhook_endpoint.h"
#include "receiver/signature/signature_headers.h"

BOOST_AUTO_TEST_SUITE(webhook_headers_test)

using namespace hh::http;
using hh::signature::Verdict;

BOOST_AUTO_TEST_CASE(headers_keep_names_order_and_join_repeats) {
  Request request{bhttp::verb::post, "/webhooks", 11};
  request.insert("Svix-Id", "msg_1");
  request.insert("X-Forwarded-For", "10.0.0.1");
  request.insert("Content-Type", "application/json");
  request.insert("x-forwarded-for", "10.0.0.2");
  request.insert("X-Quote", "a\"b");
  BOOST_TEST(headers_as_json(request) ==
             R"({"Svix-Id":"msg_1","X-Forwarded-For":"10.0.0.1, 10.0.0.2","Content-Type":"application/json","X-Quote":"a\"b"})");
}

BOOST_AUTO_TEST_CASE(repeated_signature_headers_are_stored_as_one_space_separated_list) {
  Request request{bhttp::verb::post, "/webhooks", 11};
  request.insert("svix-signature", "v1,a");
  request.insert("svix-signature", "v1,b v1,c");
  BOOST_TEST(headers_as_json(request) == R"({"svix-signature":"v1,a v1,b v1,c"})");
  // ...which is exactly the list verified live.
  BOOST_TEST(signature_headers_of(request).pick().signature == "");  // no id/timestamp: not complete
  request.insert("svix-id", "m");
  request.insert("svix-timestamp", "1");
  BOOST_TEST(signature_headers_of(request).pick().signature == "v1,a v1,b v1,c");
}

BOOST_AUTO_TEST_CASE(svix_headers_win_when_both_sets_are_complete) {
  Request request{bhttp::verb::post, "/webhooks", 11};
  request.insert("webhook-id", "w");
  request.insert("webhook-timestamp", "2");
  request.insert("webhook-signature", "v1,b");
  BOOST_TEST(signature_headers_of(request).pick().id == "w");
  request.insert("svix-id", "s");
  request.insert("svix-timestamp", "1");
  request.insert("svix-signature", "v1,a");
  auto both = signature_headers_of(request).pick();
  BOOST_TEST(both.id == "s");
  BOOST_TEST(both.timestamp == "1");
  BOOST_TEST(both.signature == "v1,a");
}

BOOST_AUTO_TEST_CASE(a_complete_webhook_set_is_verified_beside_a_stray_svix_header) {
  Request request{bhttp::verb::post, "/webhooks", 11};
  request.insert("webhook-id", "w");
  request.insert("webhook-timestamp", "2");
  request.insert("webhook-signature", "v1,b");
  request.insert("svix-id", "stray");  // e.g. added by a proxy: not a complete set
  const auto picked = signature_headers_of(request);
  BOOST_TEST((picked.family() == hh::signature::Family::webhook));
  BOOST_TEST(picked.pick().id == "w");
  BOOST_TEST(picked.pick().signature == "v1,b");
}

BOOST_AUTO_TEST_CASE(incomplete_sets_of_both_families_are_missing_headers) {
  Request request{bhttp::verb::post, "/webhooks", 11};
  request.insert("webhook-id", "w");
  request.insert("svix-timestamp", "1");
  request.insert("svix-signature", "v1,a");
  const auto picked = signature_headers_of(request).pick();
  BOOST_TEST(picked.id.empty());
  BOOST_TEST(picked.signature.empty());
}

BOOST_AUTO_TEST_CASE(repeated_ids_must_agree) {
  Request request{bhttp::verb::post, "/webhooks", 11};
  request.insert("svix-id", "a");
  request.insert("svix-id", "a");
  request.insert("svix-timestamp", "1");
  request.insert("svix-signature", "v1,x");
  BOOST_TEST((signature_headers_of(request).ambiguity() == Verdict::ok));
  request.insert("svix-id", "b");
  BOOST_TEST((signature_headers_of(request).ambiguity() == Verdict::malformed_id));
  request.insert("svix-timestamp", "2");
  BOOST_TEST((signature_headers_of(request).ambiguity() == Verdict::malformed_id));
}

BOOST_AUTO_TEST_SUITE_END()  // webhook_headers_test
