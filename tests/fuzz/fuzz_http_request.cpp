// Fuzzes whole HTTP requests through the real listener, router and webhook endpoint over
// a loopback socket, with the real inbox (SqliteInbox on an in-memory SQLite database,
// migrated like a file) behind the real writer thread.
// Input byte 0 chooses the mode: even = the remaining bytes are sent as they are;
// odd = they are a body, sent as a correctly signed POST (exercises the signed path:
// event-type peeking, the writer, duplicates).
#include <boost/asio.hpp>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "store/sqlite/database.h"
#include "store/inbox_writer.h"
#include "store/sqlite/sqlite_inbox.h"
#include "tests/support/ingest_stack.h"

namespace net = boost::asio;
using namespace hh;

namespace {

const std::string kSecret = "whsec_plJ3nmyCDGBKInavdOK15jsl";
constexpr size_t kMaxBodyBytes = 64 * 1024;

// The store behind the writer: the real schema and inbox, in memory, so thousands of
// inputs per second do not wait for fsync (durability is the store tests' subject).
sqlite::Connection open_memory_database() {
  auto db = sqlite::Connection::open(":memory:", sqlite::OpenMode::read_write_create);
  if (!db) std::abort();
  if (!store::migrate(*db)) std::abort();
  return std::move(*db);
}

struct World {
  sqlite::Connection db = open_memory_database();
  store::SqliteInbox inbox = store::SqliteInbox::create(db).value();
  store::InboxWriter writer{inbox, {}};
  std::unique_ptr<test::IngestStack> ingest;
  unsigned short port = 0;

  World() {
    writer.start();
    http::SessionLimits limits;
    limits.max_body_bytes = kMaxBodyBytes;
    limits.max_header_bytes = 8 * 1024;
    limits.idle_timeout = limits.header_timeout = limits.body_timeout = limits.write_timeout = std::chrono::seconds(2);
    ingest = std::make_unique<test::IngestStack>(writer, kSecret, 5, limits);
    port = ingest->port();
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
  // Never destroyed: the server runs until the process exits (a static World's joinable
  // thread would std::terminate at exit, and joining it leaves OpenSSL's per-thread state
  // for LeakSanitizer to report).
  static World& world = *new World;
  static uint64_t counter = 0;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string bytes = (data[0] & 1) ? signed_request(rest, ++counter) : std::string(rest);

  // Blocking calls on the client side; libFuzzer's timer signal (SIGALRM, for -timeout)
  // interrupts them now and then, so EINTR means "again", never "the server failed".
  net::io_context io;
  net::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  do {
    socket.close(ec);
    socket.connect({net::ip::make_address("127.0.0.1"), world.port}, ec);
  } while (ec == net::error::interrupted);
  if (ec) std::abort();
  for (size_t sent = 0; sent < bytes.size();) {
    sent += socket.write_some(net::buffer(bytes.data() + sent, bytes.size() - sent), ec);
    if (ec && ec != net::error::interrupted) break;  // the server may close early (413, 431)
  }
  socket.shutdown(net::ip::tcp::socket::shutdown_send, ec);  // the server sees the end at once
  std::string response;
  char buffer[4096];
  for (;;) {
    const size_t n = socket.read_some(net::buffer(buffer), ec);
    if (ec == net::error::interrupted) continue;
    if (ec) break;
    if (response.size() < 64) response.append(buffer, n);
  }
  const boost::system::error_code read_end = ec;  // eof, or why the server's answer was cut
  // The delivery contract: a correctly signed delivery is always taken (200, whatever
  // its body: invalid ones are stored and marked by the processor); nothing the fuzzer
  // sends may make the server fail (5xx) or answer with something that is not HTTP.
  const std::string_view head(response);
  const bool signed_fits = (data[0] & 1) && rest.size() <= kMaxBodyBytes;
  if (signed_fits && !head.starts_with("HTTP/1.1 200 ")) {
    std::fprintf(stderr, "signed delivery not taken (%s): %.*s\n", read_end.message().c_str(),
                 static_cast<int>(head.size()), head.data());
    std::abort();
  }
  if (!head.empty() && (!head.starts_with("HTTP/1.1 ") || head.substr(9, 1) == "5")) {
    std::fprintf(stderr, "unexpected answer: %.*s\n", static_cast<int>(head.size()), head.data());
    std::abort();
  }
  return 0;
}
