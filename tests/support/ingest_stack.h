#pragma once
// The receiver's ingest path in-process, for tests and fuzz targets that need to reach
// inside it (an injected fault, an in-memory store): the real listener, router, webhook
// endpoint and health endpoints on 127.0.0.1 (a free port) with one io thread, in front of
// a writer the caller made and started. Header-only: the fuzz build (clang, without the
// test suite's libraries) includes it too.
//
// Lifetime: the writer outlives this object; the destructor stops the listener and joins
// the io thread (open client connections must be closed first: sessions end, the
// io_context runs out of work), as `serve` stops.
#include <boost/asio.hpp>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "receiver/http/health_endpoints.h"
#include "receiver/http/listener.h"
#include "receiver/http/webhook_endpoint.h"
#include "store/inbox_writer.h"

namespace hh::test {

class IngestStack {
 public:
  // `secret`: the signing secret; aborts when 127.0.0.1 cannot be listened on (no test
  // can run then).
  IngestStack(store::InboxWriter& writer, const std::string& secret, int retry_after_s,
              const http::SessionLimits& limits, size_t max_connections = 64,
              std::chrono::milliseconds request_deadline = std::chrono::seconds(10),
              http::Refusals* refusals = nullptr)
      : io_(1) {
    const std::string secrets[] = {secret};
    webhook_ = std::make_unique<http::WebhookEndpoint>(writer, signature::Verifier::create(secrets, 300).value(),
                                                       http::WebhookOptions{.retry_after_seconds = retry_after_s,
                                                                            .request_deadline = request_deadline,
                                                                            .refusals = refusals});
    webhook_->mount(router_, "/webhooks");
    http::add_health_endpoints(router_, writer);
    listener_ = std::make_unique<http::Listener>(io_, 1, router_, limits,
                                                 http::ConnectionLimits{max_connections, max_connections});
    if (!listener_->listen("127.0.0.1:0")) std::abort();
    listener_->start();
    io_thread_ = std::thread([this] { io_.run(); });
  }
  ~IngestStack() {
    listener_->stop();
    io_thread_.join();
  }
  IngestStack(const IngestStack&) = delete;
  IngestStack& operator=(const IngestStack&) = delete;

  unsigned short port() const { return listener_->local_endpoint().port(); }

 private:
  boost::asio::io_context io_;
  http::Router router_;
  std::unique_ptr<http::WebhookEndpoint> webhook_;
  std::unique_ptr<http::Listener> listener_;  // after what its sessions use: destroyed first
  std::thread io_thread_;
};

}  // namespace hh::test
