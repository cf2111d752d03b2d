// What the inbox keeps of a request's headers, and which signature family is read.
#include <boost/test/unit_test.hpp>

#include "receiver/http/webhook_endpoint.h"

using namespace hh::http;

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

BOOST_AUTO_TEST_CASE(svix_headers_win_over_webhook_headers) {
  Request request{bhttp::verb::post, "/webhooks", 11};
  request.insert("webhook-id", "w");
  request.insert("webhook-timestamp", "2");
  request.insert("webhook-signature", "v1,b");
  auto only_webhook = signed_headers(request);
  BOOST_TEST(only_webhook.id == "w");
  request.insert("svix-id", "s");
  request.insert("svix-timestamp", "1");
  request.insert("svix-signature", "v1,a");
  auto both = signed_headers(request);
  BOOST_TEST(both.id == "s");
  BOOST_TEST(both.timestamp == "1");
  BOOST_TEST(both.signature == "v1,a");
}
