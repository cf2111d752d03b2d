// What the modules that run `serve` against a fake backend share (forward_serve_test,
// forward_budget_test): deliveries of distinct keys, a [[forward]] block, a backend that is
// down, and posting many deliveries at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "tests/forward/fake_backend.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

namespace hh::test::forward_serve {

// `text` with every `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to);

// The sleep example for another user and summary: deliveries of different keys.
std::string sleep_of(const std::string& user, const std::string& summary_id);

FakeBackend::Options backend_options(const std::string& secret, bool tls = false, uint16_t port = 0);

// One [[forward]] block to `url`, its secret written to a file; `extra` adds keys.
std::string forward_toml(const TempDir& dir, const std::string& name, const std::string& url,
                         const std::string& secret, const std::string& extra = "");

// Polls `done` every 20 ms until it holds or `timeout` passes; its last answer.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A free port on 127.0.0.1 that refuses connections (a backend that is down), and its URL.
std::pair<uint16_t, std::string> closed_port(const std::string& secret);

// Posts `count` sleep deliveries (message ids prefix + i, users user_of(i)) on `senders`
// connections at once, so that group commits take many each (one by one, the sending was
// half of forward_serve_test's time under ASan). Returns how many were acknowledged with
// 200; statuses are counted here: Boost.Test's checks are not for other threads.
int post_concurrently(const ServerProcess& server, int count, int senders, const std::string& prefix,
                      const std::function<std::string(int)>& user_of);

}  // namespace hh::test::forward_serve
