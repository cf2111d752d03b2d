// How a URL is read (common/http_url.h) and how messages show one: never a credential or a
// query, whatever was typed (a password with a raw '#', '?' or '/' included).
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>

#include "common/http_url.h"

BOOST_AUTO_TEST_SUITE(http_url_test)

using hh::loggable_url;
using hh::masked_url;

BOOST_AUTO_TEST_CASE(a_url_that_reads_plainly_is_shown_by_its_parts) {
  BOOST_TEST(loggable_url("https://user:pw@host.example:8443/hook?token=x#f") == "https://host.example:8443/hook");
  BOOST_TEST(masked_url("https://user:pw@host.example:8443/hook?token=x#f") == "https://***@host.example:8443/hook?***");
  BOOST_TEST(masked_url("https://host.example/hook#frag") == "https://host.example/hook#***");
  BOOST_TEST(masked_url("https://[::1]:8443/x?k=1") == "https://[::1]:8443/x?***");
  // An '@' in a query after a path is the query's.
  BOOST_TEST(loggable_url("https://host.example/hook?email=a@b.example") == "https://host.example/hook");
  BOOST_TEST(masked_url("https://host.example/hook?email=a@b.example") == "https://host.example/hook?***");
}

BOOST_AUTO_TEST_CASE(a_password_typed_raw_never_shows) {
  const std::pair<std::string, std::string> cases[] = {
      {"https://apikey:SECRET#1@api.example.com/", "https://***@api.example.com/"},
      {"https://apikey:SECRET?1@api.example.com/", "https://***@api.example.com/"},
      {"https://apikey:SE/CRET@api.example.com/x", "https://***@api.example.com/x"},
      {"https://u:12?SECRET@host", "https://***@host"},
      {"https://u:12#SECRET@host", "https://***@host"},
      {"not a url SECRET@host", "***@host"},
  };
  for (const auto& [url, masked] : cases) {
    BOOST_TEST(masked_url(url) == masked, url);
    BOOST_TEST(loggable_url(url).find("SECRET") == std::string::npos, url << " -> " << loggable_url(url));
    auto parsed = hh::parse_http_url(url);
    if (!parsed) BOOST_TEST(parsed.error().find("SECRET") == std::string::npos, parsed.error());
  }
  // A port that cannot be read after an IPv4 address is the port's fault, not the address's.
  auto typo = hh::parse_http_url("https://10.0.0.5:44x3/v2");
  BOOST_REQUIRE(!typo);
  BOOST_TEST(typo.error().find("IPv4") == std::string::npos, typo.error());
  auto dotted = hh::parse_http_url("http://127.0.0.1.example.net:8443/");
  BOOST_REQUIRE(!dotted);
  BOOST_TEST(dotted.error().find("begins with an IPv4 address") != std::string::npos, dotted.error());
  // A port that is not a number is not echoed: it may be a token typed in the wrong place.
  auto parsed = hh::parse_http_url("https://api.example.com:SECRET/");
  BOOST_REQUIRE(!parsed);
  BOOST_TEST(parsed.error().find("SECRET") == std::string::npos, parsed.error());
}

// An endpoint as serve logs it and shows it to systemd: an IPv6 address in brackets, as
// `listen` and check-config write it ("::1:8080" was logged, which reads as no address).
BOOST_AUTO_TEST_CASE(an_ipv6_endpoint_is_written_in_brackets) {
  BOOST_TEST(hh::host_port("::1", 49890) == "[::1]:49890");
  BOOST_TEST(hh::host_port("127.0.0.1", 8080) == "127.0.0.1:8080");
  BOOST_TEST(hh::host_port("localhost", 80) == "localhost:80");
}

BOOST_AUTO_TEST_SUITE_END()
