#include "tests/forward/fake_backend.h"

#include <sys/socket.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <list>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "receiver/signature/webhook_signature.h"
#include "tests/fake_service/test_certificates.h"

namespace hh::test {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace bhttp = boost::beast::http;  // not `http`: hh::http is the receiver's
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// Everything the source needs is declared in here, not at namespace scope: the unity
// builds compile it in one batch with the folder's other sources (decision 025).
struct FakeBackend::Impl {
  static constexpr size_t kMaxBodyBytes = 16 * 1024 * 1024;
  static constexpr int64_t kToleranceSeconds = 300;  // the Standard Webhooks default

  // What one request gets: an answer, or the connection closed without one.
  struct Answer {
    bool close_without_answer = false;
    unsigned status = 200;
    std::optional<std::string> retry_after;
    std::string body;
    bool close_after = false;
    std::chrono::milliseconds drip{0};
    bool drip_body_only = false;
  };

  // Counts a request from when it was read whole until it was answered or dropped.
  class Handling {
   public:
    explicit Handling(Impl& impl) : impl_(impl) {
      std::lock_guard lock(impl_.mutex);
      ++impl_.requests;
      impl_.max_in_flight = std::max(impl_.max_in_flight, ++impl_.in_flight);
    }
    ~Handling() {
      std::lock_guard lock(impl_.mutex);
      --impl_.in_flight;
    }
    Handling(const Handling&) = delete;
    Handling& operator=(const Handling&) = delete;

   private:
    Impl& impl_;
  };

  Options options;
  std::shared_ptr<const signature::Verifier> verifier;
  std::optional<ssl::context> tls;
  std::string ca_pem;
  uint16_t port = 0;
  net::io_context io;  // only owns the sockets: every call on them is blocking
  tcp::acceptor acceptor{io};
  std::thread accepting;

  // One thread per connection. A finished one is joined at the next accept (so a long test
  // does not pile up threads) or by stop().
  struct Connection {
    std::thread thread;
    bool done = false;  // guarded by mutex
  };

  mutable std::mutex mutex;
  std::condition_variable stopping_changed;
  mutable std::condition_variable accepted_changed;
  bool stopping = false;                  // guarded by mutex
  std::list<Connection> connections;      // guarded by mutex
  std::set<int> open_sockets;             // guarded by mutex: stop() shuts them down
  Plan plan;                              // guarded by mutex
  std::map<std::string, size_t> seen;     // guarded by mutex: signed requests per id
  std::vector<Request> accepted;          // guarded by mutex
  std::set<std::string> accepted_ids;     // guarded by mutex
  size_t duplicates = 0;                  // guarded by mutex
  size_t requests = 0;                    // guarded by mutex
  size_t bad_signatures = 0;              // guarded by mutex
  size_t in_flight = 0;                   // guarded by mutex
  size_t max_in_flight = 0;               // guarded by mutex
  uint64_t connections_accepted = 0;      // guarded by mutex

  void accept_loop();
  void serve(tcp::socket socket, uint64_t connection);
  template <typename Stream>
  void session(Stream& stream, uint64_t connection);
  // Writes `bytes` one at a time, `every` apart; false when stopped or the write failed.
  template <typename Stream>
  bool drip(Stream& stream, std::string_view bytes, std::chrono::milliseconds every);
  Answer decide(const bhttp::request<bhttp::string_body>& request, uint64_t connection);
  void close(tcp::socket& socket);
  void join_finished();
};

FakeBackend::FakeBackend(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  const std::vector<std::string> secrets{impl_->options.secret};
  auto verifier = signature::Verifier::create(secrets, Impl::kToleranceSeconds);
  if (!verifier) throw std::runtime_error("fake backend: " + verifier.error());
  impl_->verifier = std::move(verifier.value());
  set_plan({});

  if (impl_->options.tls) {
    const auto ca = fake::make_certificate_authority("healthhook fake backend CA");
    const auto certificate = fake::make_server_certificate(ca, {"localhost"}, {"127.0.0.1"});
    impl_->ca_pem = ca.cert_pem;
    impl_->tls.emplace(ssl::context::tls_server);
    impl_->tls->use_certificate_chain(net::buffer(certificate.cert_pem));
    impl_->tls->use_private_key(net::buffer(certificate.key_pem), ssl::context::pem);
  }

  const tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), impl_->options.port);
  impl_->acceptor.open(endpoint.protocol());
  // A test restarts the backend on the port of one it stopped; that port's closed
  // connections may still be in TIME_WAIT.
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  error_code ec;
  impl_->acceptor.bind(endpoint, ec);
  if (ec) throw std::runtime_error("fake backend: bind 127.0.0.1:" + std::to_string(endpoint.port()) + ": " + ec.message());
  impl_->acceptor.listen(net::socket_base::max_listen_connections);
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->accepting = std::thread([impl = impl_.get()] { impl->accept_loop(); });
}

FakeBackend::~FakeBackend() { stop(); }

void FakeBackend::stop() {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) return;
    impl_->stopping = true;
    for (int fd : impl_->open_sockets) ::shutdown(fd, SHUT_RDWR);  // wakes blocked reads and handshakes
  }
  impl_->stopping_changed.notify_all();  // wakes delays
  // On Linux, shutting down a listening socket wakes the thread blocked in accept().
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  impl_->accepting.join();
  error_code ignored;
  impl_->acceptor.close(ignored);
  std::list<Impl::Connection> connections;
  {
    std::lock_guard lock(impl_->mutex);
    connections.swap(impl_->connections);
  }
  for (auto& connection : connections) connection.thread.join();
}

void FakeBackend::Impl::accept_loop() {
  for (;;) {
    tcp::socket socket(io);
    error_code ec;
    acceptor.accept(socket, ec);
    join_finished();
    std::unique_lock lock(mutex);
    if (stopping) return;  // `socket` closes as it goes
    if (ec) {
      // Out of descriptors, or the like: try again a little later instead of spinning.
      stopping_changed.wait_for(lock, std::chrono::milliseconds(10), [this] { return stopping; });
      continue;
    }
    const uint64_t connection = ++connections_accepted;
    const int fd = socket.native_handle();
    open_sockets.insert(fd);
    auto& entry = connections.emplace_back();
    try {
      entry.thread = std::thread([this, &entry, connection, accepted = std::move(socket)]() mutable {
        serve(std::move(accepted), connection);
        std::lock_guard done_lock(mutex);
        entry.done = true;
      });
    } catch (const std::system_error& e) {
      // Out of threads: the socket went with the lambda, so this connection is closed.
      std::fprintf(stderr, "fake backend: no thread for connection %llu: %s\n",
                   static_cast<unsigned long long>(connection), e.what());
      open_sockets.erase(fd);
      connections.pop_back();
    }
  }
}

void FakeBackend::Impl::join_finished() {
  std::list<Connection> finished;
  {
    std::lock_guard lock(mutex);
    for (auto it = connections.begin(); it != connections.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), connections, it);
      it = next;
    }
  }
  for (auto& connection : finished) connection.thread.join();  // each has only its return left
}

void FakeBackend::Impl::serve(tcp::socket socket, uint64_t connection) {
  // Nothing may escape the thread; a failure here ends this connection only.
  try {
    if (tls) {
      ssl::stream<tcp::socket&> stream(socket, *tls);
      error_code ec;
      stream.handshake(ssl::stream_base::server, ec);
      if (!ec) session(stream, connection);
    } else {
      session(socket, connection);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake backend: connection %llu: %s\n", static_cast<unsigned long long>(connection), e.what());
  }
  close(socket);
}

template <typename Stream>
void FakeBackend::Impl::session(Stream& stream, uint64_t connection) {
  boost::beast::flat_buffer buffer;
  for (;;) {
    // A fresh parser per message: the message-level read would keep Beast's 1 MB body limit.
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxBodyBytes);
    error_code ec;
    bhttp::read(stream, buffer, parser, ec);
    Answer answer;
    std::optional<Handling> counted;
    if (ec == bhttp::error::body_limit) {
      counted.emplace(*this);
      answer.status = 413;
      answer.body = R"({"error":"body over 16 MiB"})";
      answer.close_after = true;
    } else if (ec) {
      return;  // the client closed, stop() shut the socket down, or not HTTP
    } else {
      counted.emplace(*this);
      answer = decide(parser.get(), connection);
      answer.close_after = answer.close_after || !parser.get().keep_alive();
    }
    if (answer.close_without_answer) return;

    bhttp::response<bhttp::string_body> response;
    response.version(11);
    response.result(answer.status);  // the unsigned overload: also statuses bhttp::status has no name for
    response.set(bhttp::field::server, "healthhook-fake-backend");
    if (answer.retry_after) response.set(bhttp::field::retry_after, *answer.retry_after);
    if (answer.status != 204 && answer.status != 304) {
      response.set(bhttp::field::content_type, "application/json");
      response.body() = std::move(answer.body);
    }
    response.keep_alive(!answer.close_after);
    response.prepare_payload();
    if (answer.drip.count() > 0) {
      std::ostringstream serialized;
      serialized << response;
      const std::string bytes = serialized.str();
      const size_t at_once = answer.drip_body_only ? bytes.size() - response.body().size() : 0;
      net::write(stream, net::buffer(bytes.data(), at_once), ec);
      if (ec || !drip(stream, std::string_view(bytes).substr(at_once), answer.drip) || answer.close_after) return;
      continue;
    }
    bhttp::write(stream, response, ec);
    if (ec || answer.close_after) return;
  }
}

template <typename Stream>
bool FakeBackend::Impl::drip(Stream& stream, std::string_view bytes, std::chrono::milliseconds every) {
  for (const char c : bytes) {
    {
      std::unique_lock lock(mutex);
      if (stopping_changed.wait_for(lock, every, [this] { return stopping; })) return false;
    }
    error_code ec;
    net::write(stream, net::buffer(&c, 1), ec);
    if (ec) return false;
  }
  return true;
}

FakeBackend::Impl::Answer FakeBackend::Impl::decide(const bhttp::request<bhttp::string_body>& request, uint64_t connection) {
  Answer answer;
  const std::string_view target = request.target();
  if (target.substr(0, target.find('?')) != options.path) {
    answer.status = 404;
    answer.body = R"({"error":"not found"})";
    return answer;
  }
  if (request.method() != bhttp::verb::post) {
    answer.status = 405;
    answer.body = R"({"error":"POST only"})";
    return answer;
  }

  Request seen_request;
  for (const auto& field : request) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, inserted] = seen_request.headers.try_emplace(std::move(name), field.value());
    if (!inserted) it->second += ", " + std::string(field.value());
  }
  const auto header = [&](const char* name) {
    auto it = seen_request.headers.find(name);
    return it == seen_request.headers.end() ? std::string() : it->second;
  };
  seen_request.id = header("webhook-id");
  seen_request.timestamp = header("webhook-timestamp");
  const std::string signature_header = header("webhook-signature");
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const auto verdict = verifier->verify({seen_request.id, seen_request.timestamp, signature_header}, request.body(), now);
  if (verdict != signature::Verdict::ok) {
    std::lock_guard lock(mutex);
    ++bad_signatures;
    answer.status = 401;
    answer.body = R"({"error":")" + std::string(signature::verdict_reason(verdict)) + "\"}";
    return answer;
  }
  seen_request.body = request.body();
  seen_request.connection = connection;

  Plan current;
  {
    std::lock_guard lock(mutex);
    seen_request.attempt = seen[seen_request.id]++;
    current = plan;
  }
  // Outside the lock: a plan may call the getters, or block to line requests up.
  Fault fault;
  try {
    fault = current(seen_request);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake backend: the plan threw: %s\n", e.what());
    fault = Fault{};
    fault.status = 500;
  }

  std::unique_lock lock(mutex);
  if (fault.delay.count() > 0) {
    stopping_changed.wait_for(lock, fault.delay, [this] { return stopping; });
  }
  if (stopping || fault.drop) {
    answer.close_without_answer = true;
    return answer;
  }
  answer.status = fault.status;
  answer.retry_after = std::move(fault.retry_after);
  answer.drip = fault.drip;
  answer.drip_body_only = fault.drip_body_only;
  answer.close_after = fault.close;
  if (fault.status >= 200 && fault.status < 300) {
    // Recorded before the answer is written: once a client sees the 2xx, accepted() has it.
    seen_request.duplicate = !accepted_ids.insert(seen_request.id).second;
    if (seen_request.duplicate) ++duplicates;
    accepted.push_back(std::move(seen_request));
    accepted_changed.notify_all();
    answer.body = R"({"ok":true})";
  } else {
    answer.body = R"({"error":"fault plan"})";
  }
  if (fault.body) answer.body = std::move(*fault.body);
  return answer;
}

void FakeBackend::Impl::close(tcp::socket& socket) {
  {
    // Out of the set before the descriptor is closed, so that stop() never shuts down a
    // number the system has handed out again.
    std::lock_guard lock(mutex);
    open_sockets.erase(socket.native_handle());
  }
  error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

void FakeBackend::set_plan(Plan plan) {
  if (!plan) plan = [](const Request&) { return Fault{}; };
  std::lock_guard lock(impl_->mutex);
  impl_->plan = std::move(plan);
}

uint16_t FakeBackend::port() const { return impl_->port; }

std::string FakeBackend::url() const {
  const std::string host = impl_->options.tls ? "https://localhost:" : "http://127.0.0.1:";
  return host + std::to_string(impl_->port) + impl_->options.path;
}

const std::string& FakeBackend::ca_pem() const { return impl_->ca_pem; }

std::vector<FakeBackend::Request> FakeBackend::accepted() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->accepted;
}

size_t FakeBackend::unique_accepted() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->accepted_ids.size();
}

std::set<std::string> FakeBackend::accepted_ids() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->accepted_ids;
}

size_t FakeBackend::duplicates() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->duplicates;
}

size_t FakeBackend::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

size_t FakeBackend::bad_signatures() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->bad_signatures;
}

size_t FakeBackend::max_in_flight() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->max_in_flight;
}

size_t FakeBackend::connections() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->connections_accepted;
}

bool FakeBackend::wait_for_unique(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mutex);
  return impl_->accepted_changed.wait_for(lock, timeout, [&] { return impl_->accepted_ids.size() >= n; });
}

bool FakeBackend::wait_for_unique_while_coming(size_t n, std::chrono::milliseconds stall,
                                               std::chrono::milliseconds bound) const {
  const auto give_up = std::chrono::steady_clock::now() + bound;
  std::unique_lock lock(impl_->mutex);
  while (impl_->accepted_ids.size() < n && std::chrono::steady_clock::now() < give_up) {
    const size_t before = impl_->accepted_ids.size();
    if (!impl_->accepted_changed.wait_for(lock, stall, [&] { return impl_->accepted_ids.size() > before; }))
      return false;  // none came for `stall`
  }
  return impl_->accepted_ids.size() >= n;
}

}  // namespace hh::test
