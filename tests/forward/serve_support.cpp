#include "tests/forward/serve_support.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "tests/support/examples.h"
#include "tests/support/http_client.h"

namespace hh::test::forward_serve {
namespace {

constexpr const char* kSleepUser = "4a29dbc7-6db3-4c83-bfac-70a20a4be1b2";
constexpr const char* kSleepId = "5b1c8d0a-6f1e-4a43-9d3c-2f6c2b9e7a11";

}  // namespace

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string sleep_of(const std::string& user, const std::string& summary_id) {
  return replaced(replaced(example_file("summary-sleep.json"), kSleepUser, user), kSleepId, summary_id);
}

FakeBackend::Options backend_options(const std::string& secret, bool tls, uint16_t port) {
  FakeBackend::Options options;
  options.secret = secret;
  options.tls = tls;
  options.port = port;
  return options;
}

std::string forward_toml(const TempDir& dir, const std::string& name, const std::string& url,
                         const std::string& secret, const std::string& extra) {
  dir.write(name + ".secret", secret + "\n");
  return "[[forward]]\nname = \"" + name + "\"\nurl = \"" + url + "\"\nsecret_file = \"" + name + ".secret\"\n" +
         "backoff_initial_ms = 50\nbackoff_max_s = 1\n" + extra;
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

std::pair<uint16_t, std::string> closed_port(const std::string& secret) {
  FakeBackend probe(backend_options(secret));
  return {probe.port(), probe.url()};
}

int post_concurrently(const ServerProcess& server, int count, int senders, const std::string& prefix,
                      const std::function<std::string(int)>& user_of) {
  std::vector<int> statuses(count, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < senders; ++t) {
    threads.emplace_back([&, t] {
      HttpClient client(server.port());
      for (int i = t; i < count; i += senders) {
        statuses[i] = client.post_webhook(server.secret(), prefix + std::to_string(i),
                                          sleep_of(user_of(i), "s-" + std::to_string(i))).status;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return static_cast<int>(std::count(statuses.begin(), statuses.end(), 200));
}

}  // namespace hh::test::forward_serve
