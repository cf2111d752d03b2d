// The bytes an answer leaves as (receiver/http/response_bytes.h) are those Beast's own
// serializer writes for the same response: every kind of answer the listener gives.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/test/unit_test.hpp>
#include <sstream>

#include "receiver/http/http_types.h"
#include "receiver/http/response_bytes.h"

namespace {

namespace bhttp = boost::beast::http;
using hh::http::Response;
using hh::http::Status;

std::string written_by_beast(Response response) {
  std::ostringstream out;
  out << response;
  return out.str();
}

std::string written_as_bytes(const Response& response) {
  std::string out = "left over from the last answer";
  hh::http::write_bytes_of(response, out);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(response_bytes_test)

BOOST_AUTO_TEST_CASE(every_kind_of_answer_is_written_as_beast_writes_it) {
  std::vector<Response> answers;
  answers.push_back(hh::http::json_response(Status::ok, R"({"status":"stored","seq":12})"));
  Response refused = hh::http::error_response(Status::unauthorized, "signature does not match");
  refused.keep_alive(false);
  answers.push_back(refused);
  Response busy = hh::http::error_response(Status::service_unavailable, "too many request bodies in flight");
  busy.set(bhttp::field::retry_after, "1");
  answers.push_back(busy);
  answers.push_back(hh::http::without_body(hh::http::error_response(Status::not_found, "no such path")));
  answers.push_back(hh::http::text_response(Status::ok, "# HELP x\nx 1\n", "text/plain; version=0.0.4"));
  Response custom{Status::ok, 10};  // HTTP/1.0, a reason of its own, a field Beast does not know
  custom.reason("Fine");
  custom.set("X-Custom-Field", "value with spaces");
  custom.body() = "done";
  custom.prepare_payload();
  answers.push_back(custom);
  Response no_content{Status::no_content, 11};
  answers.push_back(no_content);
  for (const Response& answer : answers) {
    BOOST_TEST_CONTEXT(answer.result_int()) {
      BOOST_TEST(hh::http::writes_as_bytes(answer));
      BOOST_TEST(written_as_bytes(answer) == written_by_beast(answer));
    }
  }
  BOOST_TEST(written_as_bytes(answers[0]).starts_with("HTTP/1.1 200 OK\r\n"));
  BOOST_TEST(written_as_bytes(answers[0]).ends_with("\r\n\r\n{\"status\":\"stored\",\"seq\":12}\n"));
}

BOOST_AUTO_TEST_CASE(chunked_and_large_answers_are_left_to_beast) {
  Response chunked{Status::ok, 11};
  chunked.chunked(true);
  chunked.body() = "framed while written";
  BOOST_TEST(!hh::http::writes_as_bytes(chunked));
  // A read-API page or a console file: never copied into a buffer each connection keeps.
  Response large = hh::http::text_response(Status::ok, std::string(hh::http::kLargestBodyWrittenAsBytes + 1, 'x'),
                                           "text/plain");
  BOOST_TEST(!hh::http::writes_as_bytes(large));
  large.body().pop_back();
  large.prepare_payload();
  BOOST_TEST(hh::http::writes_as_bytes(large));
  BOOST_TEST(written_as_bytes(large) == written_by_beast(large));
}

BOOST_AUTO_TEST_SUITE_END()  // response_bytes_test
