// fetcher/service_calls.h against the fake service: DELETE /v2/user/{user_id}/{provider}
// returns the service's `success`, POST /v2/user/refresh/{user_id} reads the Refresh
// result, each call is one request with the method, path and key the interface names,
// and failures are values of the right kind (bad input: no request at all).
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cctype>

#include "fetcher/service_calls.h"
#include "tests/fake_service/fake_service.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(service_calls_test)

using namespace hh;

namespace {

const std::string kCallsUser = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";
constexpr const char* kCallsKey = "calls-test-api-key";

struct CallsFixture {
  fake::FakeService service{[] {
    fake::FakeOptions options;
    options.tls = fake::TlsMode::valid;
    options.api_key = kCallsKey;
    return options;
  }()};
  test::TempDir dir;
  fetcher::ServiceAccess access;

  CallsFixture() {
    dir.write("ca.pem", service.ca_pem());
    access.service.base_url = service.base_url();
    access.service.ca_file = "ca.pem";
    access.service.read_timeout_s = 5;
    access.api_key = kCallsKey;
    access.base_dir = dir.path().string();
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(deregister_returns_the_services_success) {
  CallsFixture t;
  auto result = fetcher::deregister_user(t.access, kCallsUser, "oura");
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  BOOST_TEST(*result == true);
  auto requests = t.service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 1u);
  BOOST_TEST(requests[0].method == "DELETE");
  BOOST_TEST(requests[0].target == "/v2/user/" + kCallsUser + "/oura");
  BOOST_TEST(requests[0].api_key == kCallsKey);
  BOOST_TEST(requests[0].sni == "localhost");

  // A provider outside the interface's enum is sent as it is (the enum grows).
  t.service.set_deregister_success(false);
  result = fetcher::deregister_user(t.access, kCallsUser, "new_ring");
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  BOOST_TEST(*result == false);
  requests = t.service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 2u);
  BOOST_TEST(requests[1].path == "/v2/user/" + kCallsUser + "/new_ring");
}

BOOST_AUTO_TEST_CASE(deregister_refuses_bad_input_without_a_request) {
  CallsFixture t;
  auto result = fetcher::deregister_user(t.access, "not-a-uuid", "oura");
  BOOST_TEST(!result.ok());
  BOOST_TEST((result.error_kind() == ErrorKind::data));
  BOOST_TEST(result.error().find("not a UUID") != std::string::npos, result.error());
  result = fetcher::deregister_user(t.access, kCallsUser, "");
  BOOST_TEST((result.error_kind() == ErrorKind::data));
  // A provider that would change which endpoint is called never reaches the service.
  result = fetcher::deregister_user(t.access, kCallsUser, "..");
  BOOST_TEST(!result.ok());
  BOOST_TEST(t.service.requests().empty());
}

BOOST_AUTO_TEST_CASE(deregister_failures_name_the_request) {
  CallsFixture t;
  fake::Fault error;
  error.kind = fake::Fault::Kind::status;
  error.status = 500;
  const std::string path = "/v2/user/" + kCallsUser + "/garmin";
  t.service.inject(path, error);
  auto result = fetcher::deregister_user(t.access, kCallsUser, "garmin");
  BOOST_TEST(!result.ok());
  BOOST_TEST((result.error_kind() == ErrorKind::other));
  BOOST_TEST(result.error() == "DELETE " + t.service.base_url() + path + ": HTTP 500: {\"detail\":\"injected fault\"}");

  fake::Fault dropped;
  dropped.kind = fake::Fault::Kind::close_without_response;
  t.service.inject(path, dropped);
  result = fetcher::deregister_user(t.access, kCallsUser, "garmin");
  BOOST_TEST((result.error_kind() == ErrorKind::io), result.error());
  BOOST_TEST(t.service.request_count(path) == 2u);  // sent once each time, never repeated

  fake::Fault malformed;
  malformed.kind = fake::Fault::Kind::status;
  malformed.status = 200;
  malformed.body = "{\"ok\":true}";
  t.service.inject(path, malformed);
  result = fetcher::deregister_user(t.access, kCallsUser, "garmin");
  BOOST_TEST((result.error_kind() == ErrorKind::other));
  BOOST_TEST(result.error().find("success: missing") != std::string::npos, result.error());
}

BOOST_AUTO_TEST_CASE(refresh_reads_the_refresh_result) {
  CallsFixture t;
  fake::RefreshAnswer answer;
  answer.refreshed_sources = {"withings/body", "withings/weight"};
  answer.in_progress_sources = {};
  answer.failed_sources = {"oura/sleep"};
  t.service.set_refresh_answer(answer);
  auto result = fetcher::refresh_user(t.access, kCallsUser, 60);
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  BOOST_TEST(result->success);
  BOOST_TEST(result->user_id == kCallsUser);
  BOOST_TEST(result->refreshed_sources == (std::vector<std::string>{"withings/body", "withings/weight"}),
             boost::test_tools::per_element());
  BOOST_TEST(result->in_progress_sources.empty());
  BOOST_TEST(result->failed_sources == (std::vector<std::string>{"oura/sleep"}), boost::test_tools::per_element());
  const auto requests = t.service.requests();
  BOOST_REQUIRE_EQUAL(requests.size(), 1u);
  BOOST_TEST(requests[0].method == "POST");
  BOOST_TEST(requests[0].query.at("timeout") == "60");

  // Out of the service's range: refused here, not sent.
  for (const int64_t timeout : {int64_t{4}, int64_t{61}}) {
    result = fetcher::refresh_user(t.access, kCallsUser, timeout);
    BOOST_TEST((result.error_kind() == ErrorKind::data));
  }
  BOOST_TEST(t.service.requests().size() == 1u);

  // A body without one of the five required fields.
  fake::Fault partial;
  partial.kind = fake::Fault::Kind::status;
  partial.status = 200;
  partial.body = "{\"success\":true,\"user_id\":\"" + kCallsUser + "\",\"refreshed_sources\":[]}";
  t.service.inject("/v2/user/refresh/" + kCallsUser, partial);
  result = fetcher::refresh_user(t.access, kCallsUser, 10);
  BOOST_TEST(!result.ok());
  BOOST_TEST(result.error().find("in_progress_sources: missing") != std::string::npos, result.error());

  // An answer about another user is not this user's result; the same user in the other
  // letter case is.
  const auto answer_naming = [&](const std::string& user) {
    fake::Fault named;
    named.kind = fake::Fault::Kind::status;
    named.status = 200;
    named.body = "{\"success\":true,\"user_id\":\"" + user +
                 "\",\"refreshed_sources\":[],\"in_progress_sources\":[],\"failed_sources\":[]}";
    t.service.inject("/v2/user/refresh/" + kCallsUser, named);
    return fetcher::refresh_user(t.access, kCallsUser, 10);
  };
  result = answer_naming("0f0f0f0f-0000-4000-8000-00000000000f");
  BOOST_TEST(!result.ok());
  BOOST_TEST(result.error().find("is not the user asked for") != std::string::npos, result.error());
  std::string upper = kCallsUser;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  BOOST_TEST_REQUIRE(upper != kCallsUser);
  result = answer_naming(upper);
  BOOST_TEST(result.ok(), (result.ok() ? "" : result.error()));
}

BOOST_AUTO_TEST_SUITE_END()  // service_calls_test
