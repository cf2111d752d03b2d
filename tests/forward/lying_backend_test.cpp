// `serve` forwarding to a backend that lies (issue 45, under attack): interim 1xx answers
// before the final one, a 2xx whose body never ends or never comes, a backend that never
// reads the request or hangs up half way through it, redirects to another host, two
// answers to one request, Retry-After values that are huge, negative, dates or garbage, and
// error pages that echo the URL's token. The real binary; the backend is scripted byte by
// byte (scripted_backend.h) or the signature-checking fake (fake_backend.h). Deliveries
// mode throughout: one entry per POST, whose webhook-id is the delivery's message id.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "forward/echo_redaction.h"
#include "tests/forward/fake_backend.h"
#include "tests/forward/serve_support.h"
#include "tests/forward/scripted_backend.h"
#include "tests/support/database_probe.h"
#include "tests/support/examples.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(lying_backend_test)

using namespace hh;
using namespace hh::test::forward_serve;
using namespace std::chrono_literals;

namespace {

std::string user_of(size_t i) {
  const std::string n = std::to_string(100 + i);
  return "abcdef00-0000-4000-8000-000000000" + n;
}

// A deliveries-mode [[forward]] block to `url`; `extra` adds keys.
std::string forward_block(const test::TempDir& dir, const std::string& url, const std::string& secret,
                          const std::string& extra = "") {
  dir.write("raw.secret", secret + "\n");
  return "[[forward]]\nname = \"raw\"\nurl = \"" + url + "\"\nsecret_file = \"raw.secret\"\nmode = \"deliveries\"\n" +
         "timeout_ms = 1000\nbackoff_initial_ms = 50\nbackoff_max_s = 1\n" + extra;
}

int64_t outbox(const test::ServerProcess& server, const std::string& where = "1") {
  return test::query_int(server.database(), "SELECT count(*) FROM outbox WHERE " + where);
}

size_t requests_for(const test::ScriptedBackend& backend, const std::string& id) {
  size_t n = 0;
  for (const auto& r : backend.requests()) n += r.id == id ? 1 : 0;
  return n;
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// RFC 9110 §15.2: a client must be able to parse 1xx answers it did not ask for before the
// final one. A backend (or its proxy) that sends 103 Early Hints or 102 Processing and then
// 200 applied the POST: it is delivered, not dead with "HTTP 103". However many: one that
// says 102 every little while as it works (20 here) was dead with "HTTP 102" after the
// eighth (black-box pass, stop 82).
BOOST_AUTO_TEST_CASE(interim_1xx_answers_before_the_2xx_are_skipped) {
  test::ScriptedBackend backend([](test::ScriptedBackend::Link& link) {
    std::string processing;
    for (int i = 0; i < 20; ++i) processing += "HTTP/1.1 102 Processing\r\n\r\n";
    while (auto request = link.read_request()) {
      if (!link.write("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" + processing +
                      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")) {
        return;
      }
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url(), test::random_secret()));
  test::HttpClient client(server.port());
  for (const std::string id : {"hint-1", "hint-2"}) {
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), id, sleep_of(user_of(1), id)).status, 200);
  }
  BOOST_REQUIRE(wait_until([&] { return outbox(server, "state = 'pending'") == 0 && backend.requests().size() >= 2; }));
  BOOST_TEST(outbox(server, "state = 'dead'") == 0);
  BOOST_TEST(outbox(server) == 0);
  BOOST_TEST(requests_for(backend, "hint-1") == 1u);
  BOOST_TEST(requests_for(backend, "hint-2") == 1u);
}

// A 2xx is success as soon as its status line is in, whatever follows: a chunked body that
// never ends, a Content-Length of a terabyte that never comes, nothing at all.
BOOST_AUTO_TEST_CASE(a_2xx_whose_body_never_ends_or_never_comes_is_delivered_once) {
  test::ScriptedBackend backend([](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      if (request->id == "endless") {
        if (!link.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
        const std::string chunk = "400\r\n" + std::string(1024, 'x') + "\r\n";
        while (link.write(chunk)) {
        }
        return;
      }
      if (request->id == "silent") {
        if (!link.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n")) return;
        link.wait_for_close();
        return;
      }
      if (!link.write("HTTP/1.1 204 No Content\r\n\r\n")) return;
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url(), test::random_secret()));
  test::HttpClient client(server.port());
  const std::vector<std::string> ids = {"endless", "silent", "plain"};
  for (size_t i = 0; i < ids.size(); ++i) {
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), ids[i], sleep_of(user_of(i), ids[i])).status, 200);
  }
  BOOST_REQUIRE(wait_until([&] { return outbox(server) == 0; }));
  for (const auto& id : ids) BOOST_TEST(requests_for(backend, id) == 1u, id);
}

// A 2xx whose body stalls is done at its status and costs only its connection: it held
// the POST's lane for the whole timeout_ms (black-box pass, stop 82: about four POSTs a
// second to such a backend). timeout_ms is a minute here; the six POSTs are done long
// before wait_until gives up, each on a new connection.
BOOST_AUTO_TEST_CASE(a_2xx_whose_body_stalls_does_not_hold_its_lane_for_timeout_ms) {
  test::ScriptedBackend backend([](test::ScriptedBackend::Link& link) {
    if (!link.read_request()) return;
    if (!link.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst bytes")) return;
    link.wait_for_close();
  });
  test::TempDir dir;
  dir.write("raw.secret", test::random_secret() + "\n");
  test::ServerProcess server(dir, "[[forward]]\nname = \"raw\"\nurl = \"" + backend.url() +
                                      "\"\nsecret_file = \"raw.secret\"\nmode = \"deliveries\"\n"
                                      "timeout_ms = 60000\nconcurrency = 1\n");
  test::HttpClient client(server.port());
  std::vector<std::string> ids;
  for (size_t i = 0; i < 6; ++i) {
    ids.push_back("stall-" + std::to_string(i));
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), ids.back(), sleep_of(user_of(i), ids.back())).status, 200);
  }
  BOOST_REQUIRE(wait_until([&] { return outbox(server) == 0; }));
  for (const auto& id : ids) BOOST_TEST(requests_for(backend, id) == 1u, id);
}

// A backend that accepts the connection and never reads the request, then one that hangs
// up half way through it: each attempt fails (timeout_ms, a transport error) and the POST
// goes out again after its backoff, until a backend reads it whole and answers.
BOOST_AUTO_TEST_CASE(a_backend_that_never_reads_or_hangs_up_half_way_gets_the_post_again) {
  test::ScriptedBackend backend([](test::ScriptedBackend::Link& link) {
    if (link.connection() == 1) {
      link.wait(60s);  // until stop(): never reads
      return;
    }
    if (link.connection() == 2) {
      (void)link.read_bytes(40);  // the request line, part of it
      return;
    }
    while (auto request = link.read_request()) {
      if (!link.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")) return;
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url(), test::random_secret(), "concurrency = 1\n"));
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "hang", sleep_of(user_of(1), "s1")).status, 200);
  BOOST_REQUIRE(wait_until([&] { return outbox(server) == 0; }));
  BOOST_TEST(backend.connections() >= 3u);
  BOOST_TEST(requests_for(backend, "hang") == 1u);  // read whole once: by the one that answered
  BOOST_TEST(server.wait_for_log("forward_failing", 1s));
}

// A backend that never answers some users' POSTs (spec §10: a due entry is never held back
// by entries of other users): with every place of `concurrency` taken by such POSTs, a
// healthy user's still goes out once they are slow, not after their whole timeout (a
// minute here: the wait below is a third of it). Four times as many hanging users as
// `concurrency` (they once filled the twice `concurrency` lanes a destination had).
BOOST_AUTO_TEST_CASE(posts_that_hang_do_not_hold_back_other_users_for_their_timeout) {
  test::ScriptedBackend backend([](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      if (request->body.find("hang-") != std::string::npos) {
        link.wait(90s);  // never answers (until stop())
        return;
      }
      if (!link.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")) return;
    }
  });
  test::TempDir dir;
  test::ServerProcess server(
      dir, replaced(forward_block(dir, backend.url(), test::random_secret(), "concurrency = 2\n"), "timeout_ms = 1000",
                    "timeout_ms = 60000"));
  test::HttpClient client(server.port());
  constexpr int kHanging = 8;
  const auto hanging_requests = [&] {
    size_t sent = 0;
    for (int i = 1; i <= kHanging; ++i) sent += requests_for(backend, "hang-" + std::to_string(i));
    return sent;
  };
  for (int i = 1; i <= kHanging; ++i) {
    const std::string user = "hang-" + std::to_string(i);
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), user, sleep_of(user, "s-" + user)).status, 200);
  }
  BOOST_REQUIRE(wait_until([&] { return hanging_requests() == kHanging; }, 20s));
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "healthy", sleep_of(user_of(7), "s-healthy")).status, 200);
  BOOST_TEST(wait_until([&] { return requests_for(backend, "healthy") == 1; }, 20s));
  BOOST_TEST(wait_until([&] { return outbox(server, "row_key = 'healthy'") == 0; }, 20s));
  // The hanging ones are still in flight, once each: nothing was sent twice meanwhile.
  for (int i = 1; i <= kHanging; ++i) BOOST_TEST(requests_for(backend, "hang-" + std::to_string(i)) == 1u, i);
}

// Spec §10: "an id names one exact content forever". A POST whose first attempt failed is
// retried after its row changed (a newer update of the summary arrived and was applied
// meanwhile): the retry carries the bytes of the first attempt, the newer row goes out
// under an id of its own. (Retries read the rows again once: a backend that applied the
// first attempt and acknowledged the repeated id kept the older row as the newest.)
BOOST_AUTO_TEST_CASE(a_retry_carries_the_bytes_of_the_first_attempt_after_its_row_changed) {
  std::atomic<bool> refused_once{false};
  test::ScriptedBackend backend([&](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      if (request->body.find("\"score\":50") != std::string::npos && !refused_once.exchange(true)) {
        if (!link.write("HTTP/1.1 503 Busy\r\nRetry-After: 2\r\nContent-Length: 0\r\n\r\n")) return;
        continue;
      }
      if (!link.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")) return;
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, replaced(forward_block(dir, backend.url(), test::random_secret()),
                                           "mode = \"deliveries\"", "mode = \"changes\"\nevents = [\"daily.data.sleep.*\"]"));
  test::HttpClient client(server.port());
  const std::string first = replaced(sleep_of(user_of(1), "sleep-1"), "\"score\": 82", "\"score\":50");
  const std::string second = replaced(sleep_of(user_of(1), "sleep-1"), "\"score\": 82", "\"score\":99");
  BOOST_REQUIRE(first.find("\"score\":50") != std::string::npos);
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "sleep-v1", first).status, 200);
  BOOST_REQUIRE(wait_until([&] { return refused_once.load(); }));
  // The newer version is applied while the first POST waits for its retry.
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "sleep-v2", second).status, 200);
  BOOST_REQUIRE(wait_until([&] { return outbox(server) == 0; }));
  std::map<std::string, std::vector<std::string>> bodies;  // by webhook-id
  for (const auto& request : backend.requests()) bodies[request.id].push_back(request.body);
  const auto refused = std::find_if(bodies.begin(), bodies.end(), [](const auto& sent) {
    return sent.second.front().find("\"score\":50") != std::string::npos;
  });
  BOOST_REQUIRE(refused != bodies.end());
  const std::vector<std::string>& attempts = refused->second;
  BOOST_REQUIRE_EQUAL(attempts.size(), 2u);  // refused, then retried
  BOOST_TEST(attempts[0] == attempts[1], attempts[1]);
  const bool newer_sent = std::any_of(bodies.begin(), bodies.end(), [&](const auto& sent) {
    return sent.first != refused->first && sent.second.front().find("\"score\":99") != std::string::npos;
  });
  BOOST_TEST(newer_sent);
}

// `forward show` prints the body an entry is sent with: its POST's, every change the POST
// carries (batch > 1), as it went out, not the entry alone read again. A POST of several
// users or resources that fails is split (decision 083): each entry then shows the POST it
// went out with last.
BOOST_AUTO_TEST_CASE(forward_show_prints_the_body_the_entrys_post_went_out_with) {
  test::ScriptedBackend backend([&](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      if (!link.write("HTTP/1.1 422 Unprocessable\r\nContent-Length: 0\r\n\r\n")) return;  // final: dead
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, replaced(forward_block(dir, backend.url(), test::random_secret(), "batch = 5\n"),
                                           "mode = \"deliveries\"", "mode = \"changes\""));
  test::HttpClient client(server.port());
  // Paused while two summaries of one user are made, so that they go out in one POST.
  BOOST_REQUIRE_EQUAL(test::run_healthhook({"forward", "pause", "raw", "--config", server.config_file()}).exit_code, 0);
  BOOST_REQUIRE(wait_until([&] {
    return client.get("/metrics").body.find("healthhook_forward_paused{destination=\"raw\"} 1") != std::string::npos;
  }));
  for (const std::string id : {"sleep-3", "sleep-4"}) {
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), id, sleep_of(user_of(3), id)).status, 200);
  }
  BOOST_REQUIRE(wait_until([&] {
    return outbox(server, "state = 'pending'") >= 3 &&
           outbox(server, "state = 'pending'") == test::query_int(server.database(), "SELECT count(*) FROM changes");
  }));
  BOOST_REQUIRE_EQUAL(test::run_healthhook({"forward", "resume", "raw", "--config", server.config_file()}).exit_code, 0);
  BOOST_REQUIRE(wait_until([&] { return outbox(server, "state = 'dead'") >= 3 && outbox(server, "state = 'pending'") == 0; }));
  const auto requests = backend.requests();
  BOOST_REQUIRE_GE(requests.size(), 2u);
  const auto changes_in = [](const std::string& body) {
    size_t n = 0;
    for (size_t at = body.find("{\"id\":\"hhf_"); at != std::string::npos; at = body.find("{\"id\":\"hhf_", at + 1)) ++n;
    return n;
  };
  const int64_t first = test::query_int(server.database(), "SELECT min(outbox_id) FROM outbox");
  const int64_t last = test::query_int(server.database(), "SELECT max(outbox_id) FROM outbox");
  BOOST_REQUIRE_GE(last, first + 2);
  BOOST_TEST(changes_in(requests.front().body) == static_cast<size_t>(last - first + 1));  // one POST of every change
  // The summaries' part of the split: a POST of two changes, dead whole.
  BOOST_TEST(std::any_of(requests.begin() + 1, requests.end(), [&](const auto& r) { return changes_in(r.body) >= 2; }));
  for (int64_t outbox_id = first; outbox_id <= last; ++outbox_id) {
    const std::string id = std::to_string(outbox_id);
    std::string sent;  // the last POST that carried it
    for (const auto& r : requests) {
      if (r.body.find("{\"id\":\"hhf_" + id + "\"") != std::string::npos) sent = r.body;
    }
    BOOST_REQUIRE(!sent.empty());
    auto shown = test::run_healthhook({"forward", "show", id, "--config", server.config_file()});
    BOOST_REQUIRE_EQUAL(shown.exit_code, 0);
    BOOST_TEST(shown.stdout_text.find("body:            " + sent + "\n") != std::string::npos, shown.stdout_text);
  }
}

// A POST of more than kMaxPinnedRows rows (a timeseries batch) is pinned without its
// content: reading and writing megabytes of rows for every POST of a look held ingest back.
// A small one keeps what it carried.
BOOST_AUTO_TEST_CASE(a_post_of_many_samples_is_pinned_without_its_rows) {
  test::ScriptedBackend backend([&](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      if (!link.write("HTTP/1.1 422 Unprocessable\r\nContent-Length: 0\r\n\r\n")) return;  // final: dead
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, replaced(forward_block(dir, backend.url(), test::random_secret()),
                                           "mode = \"deliveries\"", "mode = \"changes\""));
  test::HttpClient client(server.port());
  const auto samples = [](int count) {
    std::string data;
    for (int i = 0; i < count; ++i) {
      if (i > 0) data += ',';
      data += R"({"timestamp":"2024-05-16T10:)" + std::string(i / 60 < 10 ? "0" : "") + std::to_string(i / 60) + ":" +
              std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60) + R"(+00:00","value":)" +
              std::to_string(60 + i % 40) + R"(,"unit":"bpm"})";
    }
    return data;
  };
  for (const auto& [id, count] : {std::pair{"hr-many", 300}, std::pair{"hr-few", 20}}) {
    const std::string user = std::string(id) == "hr-many" ? user_of(4) : user_of(5);
    const std::string body = R"({"event_type":"daily.data.heartrate.created","user_id":")" + user +
                             R"(","data":{"user_id":")" + user + R"(","source":{"provider":"oura","type":"ring"},"data":[)" +
                             samples(count) + "]}}";
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), id, body).status, 200);
  }
  BOOST_REQUIRE(wait_until([&] {
    return outbox(server, "table_name = 'samples' AND state = 'dead'") == 2 && outbox(server, "state = 'pending'") == 0;
  }));
  BOOST_TEST(outbox(server, "table_name = 'samples' AND row_count = 300 AND content IS NULL") == 1);
  BOOST_TEST(outbox(server, "table_name = 'samples' AND row_count = 20 AND content IS NOT NULL AND content_bytes > 0") == 1);
}

// A redirect is an answer like any other: final (the POST is dead with its status), and
// never followed, to another host least of all (it would get the signed body).
BOOST_AUTO_TEST_CASE(a_redirect_is_final_and_never_followed) {
  const std::string secret = test::random_secret();
  test::FakeBackend elsewhere([&] {
    test::FakeBackend::Options options;
    options.secret = secret;
    return options;
  }());
  const std::vector<std::string> statuses = {"301", "302", "303", "307", "308"};
  test::ScriptedBackend backend([&](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      const std::string status = request->id.substr(request->id.find('-') + 1);
      if (!link.write("HTTP/1.1 " + status + " Moved\r\nLocation: " + elsewhere.url() +
                      "\r\nContent-Length: 0\r\n\r\n")) {
        return;
      }
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url(), secret));
  test::HttpClient client(server.port());
  for (size_t i = 0; i < statuses.size(); ++i) {
    BOOST_REQUIRE_EQUAL(
        client.post_webhook(server.secret(), "r-" + statuses[i], sleep_of(user_of(i), statuses[i])).status, 200);
  }
  BOOST_REQUIRE(wait_until([&] { return outbox(server, "state = 'dead'") == static_cast<int64_t>(statuses.size()); }));
  for (const auto& status : statuses) {
    BOOST_TEST(outbox(server, "row_key = 'r-" + status + "' AND last_status = " + status + " AND attempts = 1") == 1,
               status);
    BOOST_TEST(requests_for(backend, "r-" + status) == 1u, status);
  }
  BOOST_TEST(elsewhere.requests() == 0u);
}

// A backend that answers one request twice: the second answer is not the answer to the
// next POST on that keep-alive connection (which the backend refused).
BOOST_AUTO_TEST_CASE(a_second_answer_to_one_request_is_not_the_next_posts_answer) {
  test::ScriptedBackend backend([](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
      const bool written =
          request->id == "twice"
              ? link.write(ok + ok)
              : link.write("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 3600\r\nContent-Length: 0\r\n\r\n");
      if (!written) return;
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url(), test::random_secret(), "concurrency = 1\n"));
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "twice", sleep_of(user_of(1), "s1")).status, 200);
  BOOST_REQUIRE(wait_until([&] { return outbox(server) == 0; }));
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "refused", sleep_of(user_of(2), "s2")).status, 200);
  BOOST_REQUIRE(wait_until([&] { return requests_for(backend, "refused") >= 1; }));
  BOOST_REQUIRE(wait_until([&] { return outbox(server, "row_key = 'refused' AND attempts = 0") == 0; }));
  // Refused for an hour: still here, with the backend's own answer.
  BOOST_TEST(outbox(server, "row_key = 'refused' AND state = 'pending' AND last_status = 503") == 1);
}

// Retry-After as backends send it, lies included: a number of seconds too large to count
// in milliseconds and a date in the year 9999 wait the cap (a day), not "at once"; a
// negative number, garbage and a date in the past fall back to the backoff.
BOOST_AUTO_TEST_CASE(retry_after_huge_negative_dates_and_garbage) {
  const std::string secret = test::random_secret();
  test::FakeBackend backend([&] {
    test::FakeBackend::Options options;
    options.secret = secret;
    return options;
  }());
  const std::map<std::string, std::string> values = {
      {"ra-huge", "9223372036854775807"},  {"ra-year-9999", "Fri, 31 Dec 9999 23:59:59 GMT"},
      {"ra-negative", "-5"},               {"ra-garbage", "soon"},
      {"ra-past", "Sun, 06 Nov 1994 08:49:37 GMT"}};
  backend.set_plan([&](const test::BackendRequest& r) {
    test::BackendFault fault;
    const bool waits = r.id == "ra-huge" || r.id == "ra-year-9999";
    if (waits || r.attempt == 0) {
      fault.status = 503;
      fault.retry_after = values.at(r.id);
    }
    return fault;
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url(), secret, "max_attempts = 5\n"));
  test::HttpClient client(server.port());
  size_t i = 0;
  for (const auto& [id, value] : values) {
    BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), id, sleep_of(user_of(i++), id)).status, 200);
  }
  const int64_t posted = now_ms();
  BOOST_REQUIRE(backend.wait_for_unique(3, 30s));
  BOOST_TEST((backend.accepted_ids() == std::set<std::string>{"ra-negative", "ra-garbage", "ra-past"}));
  BOOST_REQUIRE(wait_until([&] { return outbox(server, "attempts >= 1") == 2; }));
  const std::string a_day_on = std::to_string(posted + 23 * 3'600'000);
  BOOST_TEST(outbox(server, "state = 'pending' AND attempts = 1 AND next_attempt_at > " + a_day_on) == 2,
             "huge: " << test::query_int(server.database(),
                                         "SELECT next_attempt_at - " + std::to_string(posted) +
                                             " FROM outbox WHERE row_key = 'ra-huge'")
                      << " ms, attempts "
                      << test::query_int(server.database(), "SELECT attempts FROM outbox WHERE row_key = 'ra-huge'"));
}

// The backend's error page may echo the request's URL, query and token included (many
// frameworks' 404 pages do), or anything else it knows, the shared secret too: neither the
// log nor `forward list` / `forward show` repeat them, also when the page is JSON that
// escapes them (`\/`, `\u002d`).
BOOST_AUTO_TEST_CASE(a_token_or_secret_the_backend_echoes_is_neither_logged_nor_kept) {
  const std::string secret = test::random_secret();
  test::FakeBackend backend([&] {
    test::FakeBackend::Options options;
    options.secret = secret;
    return options;
  }());
  const std::string token = "s3cr3t-t0ken";
  const std::string echo = "Cannot POST /hooks?token=" + token + "&x=1 (secret " + secret + ")";
  const std::string escaped_token = "s3cr3t\\u002dt0ken";
  std::string escaped_secret;
  for (const char c : secret) escaped_secret += c == '/' ? "\\/" : c == '+' ? "\\u002B" : std::string(1, c);
  const std::string json_echo = R"({"error":"Cannot POST /hooks?token=)" + escaped_token + R"(&x=1","secret":")" +
                                escaped_secret + R"("})";
  backend.set_plan([&](const test::BackendRequest& r) {
    test::BackendFault fault;
    fault.status = r.id == "echo-404" ? 404 : 503;
    fault.retry_after = "3600";
    fault.body = r.id == "echo-404" ? echo : json_echo;
    return fault;
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url() + "?token=" + token + "&x=1", secret));
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "echo-404", sleep_of(user_of(1), "s1")).status, 200);
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "echo-503", sleep_of(user_of(2), "s2")).status, 200);
  BOOST_REQUIRE(wait_until([&] { return outbox(server, "attempts >= 1") == 2; }));
  BOOST_REQUIRE(server.wait_for_log("forward_dead", 10s));
  BOOST_REQUIRE(server.wait_for_log("forward_failing", 10s));
  const std::string key = secret.substr(6);  // the base64 after whsec_
  for (const auto& line : server.log_lines()) {
    BOOST_TEST(line.find(token) == std::string::npos, line);
    BOOST_TEST(line.find(key) == std::string::npos, line);
    BOOST_TEST(line.find("t0ken") == std::string::npos, line);
    BOOST_TEST(line.find(escaped_secret.substr(6)) == std::string::npos, line);
  }
  auto listed = test::run_healthhook({"forward", "list", "--format", "jsonl", "--config", server.config_file()});
  BOOST_REQUIRE_EQUAL(listed.exit_code, 0);
  BOOST_TEST(listed.stdout_text.find("Cannot POST /hooks") != std::string::npos, listed.stdout_text);
  BOOST_TEST(listed.stdout_text.find(token) == std::string::npos, listed.stdout_text);
  BOOST_TEST(listed.stdout_text.find(key) == std::string::npos, listed.stdout_text);
  BOOST_TEST(listed.stdout_text.find("t0ken") == std::string::npos, listed.stdout_text);
  BOOST_TEST(listed.stdout_text.find(escaped_secret.substr(6)) == std::string::npos, listed.stdout_text);
  const int64_t id = test::query_int(server.database(), "SELECT outbox_id FROM outbox WHERE row_key = 'echo-404'");
  auto shown = test::run_healthhook({"forward", "show", std::to_string(id), "--config", server.config_file()});
  BOOST_REQUIRE_EQUAL(shown.exit_code, 0);
  BOOST_TEST(shown.stdout_text.find(token) == std::string::npos, shown.stdout_text);
  BOOST_TEST(shown.stdout_text.find(key) == std::string::npos, shown.stdout_text);
}

// The key's base64 echoed without its '=' padding, or as base64url, is hidden too: a
// backend that printed it unpadded put the HMAC key in the log and in `forward list`.
BOOST_AUTO_TEST_CASE(the_key_echoed_unpadded_or_as_base64url_is_hidden) {
  // 32 bytes whose base64 holds '+', '/' and one '=' of padding.
  const std::string key = "pU2AjdzGhS3uAc9PhbXh+il5akRDD6Zn/nGB+bwpUPg=";
  auto url = parse_http_url("http://127.0.0.1:9/hooks");
  BOOST_REQUIRE(url);
  const forward::EchoRedaction redaction(*url, "whsec_" + key);
  const std::string unpadded = key.substr(0, key.size() - 1);
  std::string base64url = unpadded;
  std::replace(base64url.begin(), base64url.end(), '+', '-');
  std::replace(base64url.begin(), base64url.end(), '/', '_');
  for (const std::string& echoed : {key, unpadded, base64url, base64url + "=", "whsec_" + key}) {
    const std::string shown = redaction.apply("echo " + echoed + " end", TextEnd::whole);
    BOOST_TEST(shown == "echo [redacted] end", echoed);
  }
}

// An error answer that ends early (a Content-Length it does not fill, the connection
// closed) may end inside the secret it echoes: its start is not shown either (an attack
// on the redaction: only answers longer than the excerpt were taken as cut).
BOOST_AUTO_TEST_CASE(an_error_answer_cut_inside_the_secret_shows_none_of_it) {
  const std::string secret = test::random_secret();
  const std::string start_of_secret = secret.substr(0, 20);
  test::ScriptedBackend backend([&](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      link.write("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 300\r\n\r\nrefused: bad secret " +
                 start_of_secret);
      return;  // closed, 300 bytes announced
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url(), secret, "max_attempts = 1\n"));
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "cut-1", sleep_of(user_of(1), "cut-1")).status, 200);
  BOOST_REQUIRE(wait_until([&] { return outbox(server, "last_error IS NOT NULL") == 1; }));
  const std::string error = test::query_text(server.database(), "SELECT last_error FROM outbox");
  BOOST_TEST(error.find("refused: bad secret [redacted]") != std::string::npos, error);
  BOOST_TEST(error.find(start_of_secret.substr(6, 8)) == std::string::npos, error);
  for (const auto& line : server.log_lines()) BOOST_TEST(line.find(start_of_secret) == std::string::npos, line);
}

// An error answer without a body is recorded as its status alone: "HTTP 500", with no empty
// tail ("HTTP 500: ") for `forward list`, the read API and the console to show.
BOOST_AUTO_TEST_CASE(an_error_answer_without_a_body_is_its_status_alone) {
  test::ScriptedBackend backend([&](test::ScriptedBackend::Link& link) {
    while (auto request = link.read_request()) {
      link.write("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
    }
  });
  test::TempDir dir;
  test::ServerProcess server(dir, forward_block(dir, backend.url(), test::random_secret(), "max_attempts = 1\n"));
  test::HttpClient client(server.port());
  BOOST_REQUIRE_EQUAL(client.post_webhook(server.secret(), "empty-1", sleep_of(user_of(1), "empty-1")).status, 200);
  BOOST_REQUIRE(wait_until([&] { return outbox(server, "last_error IS NOT NULL") == 1; }));
  const std::string error = test::query_text(server.database(), "SELECT last_error FROM outbox");
  BOOST_TEST(error.ends_with("last: HTTP 500"), error);  // max_attempts = 1: dead at once
}

BOOST_AUTO_TEST_SUITE_END()
