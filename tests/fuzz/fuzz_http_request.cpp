// Fuzzes whole HTTP requests through the real listener, router and webhook endpoint over
// a loopback socket, with an in-memory inbox behind the real writer thread.
// Input byte 0 chooses the mode: even = the remaining bytes are sent as they are;
// odd = they are a body, sent as a correctly signed POST (exercises the signed path:
// event-type peeking, the writer, duplicates).
#include <boost/asio.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

#include "receiver/http/health_endpoints.h"
#include "receiver/http/listener.h"
#include "receiver/http/webhook_endpoint.h"
#include "store/inbox_writer.h"

namespace net = boost::asio;
using namespace hh;

namespace {

const std::string kSecret = "whsec_plJ3nmyCDGBKInavdOK15jsl";

// The store behind the writer, in memory: the fuzzer tests the HTTP side, not SQLite.
class MemoryInbox final : public store::Inbox {
 public:
  Result<std::vector<store::Appended>> append(std::span<const store::NewDelivery* const> batch) override {
    std::vector<store::Appended> out;
    for (const auto* d : batch) {
      auto [it, inserted] = seq_by_id_.emplace(d->message_id, last_seq_ + 1);
      if (inserted) ++last_seq_;
      out.push_back({inserted ? store::AppendStatus::stored : store::AppendStatus::duplicate, it->second});
    }
    return out;
  }
  int64_t last_seq() const override { return last_seq_; }

 private:
  std::map<std::string, int64_t> seq_by_id_;
  int64_t last_seq_ = 0;
};

struct World {
  MemoryInbox inbox;
  store::InboxWriter writer{inbox, {}};
  net::io_context io{1};
  http::Router router;
  std::unique_ptr<http::WebhookEndpoint> webhook;
  std::unique_ptr<http::Listener> listener;
  std::thread io_thread;
  unsigned short port = 0;

  World() {
    const std::string secrets[] = {kSecret};
    webhook = std::make_unique<http::WebhookEndpoint>(writer, signature::Verifier::create(secrets, 300).value(), 5);
    router.add(http::bhttp::verb::post, "/webhooks", [this](http::Request& r) { return webhook->handle(r); });
    http::add_health_endpoints(router, writer);
    http::SessionLimits limits;
    limits.max_body_bytes = 64 * 1024;
    limits.max_header_bytes = 8 * 1024;
    limits.idle_timeout = limits.header_timeout = limits.body_timeout = limits.write_timeout = std::chrono::seconds(2);
    listener = std::make_unique<http::Listener>(io, router, limits, 64);
    if (!listener->listen("127.0.0.1:0")) std::abort();
    port = listener->local_endpoint().port();
    writer.start();
    listener->start();
    io_thread = std::thread([this] { io.run(); });
  }
};

std::string signed_request(std::string_view body, uint64_t counter) {
  const std::string id = "msg_fuzz_" + std::to_string(counter % 64);  // some repeat: duplicates
  const std::string timestamp = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  const std::string signature = signature::sign(kSecret, id, timestamp, body).value();
  return "POST /webhooks HTTP/1.1\r\nHost: f\r\nsvix-id: " + id + "\r\nsvix-timestamp: " + timestamp +
         "\r\nsvix-signature: " + signature + "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + std::string(body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  static uint64_t counter = 0;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string bytes = (data[0] & 1) ? signed_request(rest, ++counter) : std::string(rest);

  net::io_context io;
  net::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect({net::ip::make_address("127.0.0.1"), world.port}, ec);
  if (ec) std::abort();
  net::write(socket, net::buffer(bytes), ec);
  socket.shutdown(net::ip::tcp::socket::shutdown_send, ec);  // the server sees the end at once
  char buffer[4096];
  for (;;) {
    socket.read_some(net::buffer(buffer), ec);
    if (ec) break;
  }
  return 0;
}
