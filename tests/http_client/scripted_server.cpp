#include "tests/http_client/scripted_server.h"

#include <openssl/ssl.h>
#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "tests/fake_service/test_certificates.h"

namespace hh::test {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

struct ScriptedServer::Impl {
  Script script;
  std::optional<ssl::context> tls;
  net::io_context io;
  tcp::acceptor acceptor{io};
  std::thread accepting;
  mutable std::mutex mutex;
  std::condition_variable stopping_changed;
  bool stopping = false;                    // guarded by mutex
  std::vector<std::thread> connections;     // guarded by mutex
  std::set<int> open_sockets;               // guarded by mutex: shut down by the destructor
  size_t accepted = 0;                      // guarded by mutex
  size_t requests = 0;                      // guarded by mutex
  std::string last_sni;                     // guarded by mutex
};

struct ServerSide::Impl {
  std::optional<tcp::socket> plain;
  std::optional<ssl::stream<tcp::socket>> tls;
  boost::beast::flat_buffer buffer;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser;  // between read_head() and read_body()
  tcp::socket& lowest() { return tls ? tls->next_layer() : *plain; }
  template <typename F>
  void with_stream(F f) {
    if (tls) {
      f(*tls);
    } else {
      f(*plain);
    }
  }
};

ServerSide::ServerSide(ScriptedServer& server, std::unique_ptr<Impl> impl) : server_(server), impl_(std::move(impl)) {}

ServerSide::~ServerSide() { close(); }

bool ServerSide::read_request() {
  bhttp::request<bhttp::string_body> request;
  error_code ec;
  impl_->with_stream([&](auto& stream) { bhttp::read(stream, impl_->buffer, request, ec); });
  if (ec) return false;
  target_ = std::string(request.target());
  std::lock_guard lock(server_.impl_->mutex);
  ++server_.impl_->requests;
  return true;
}

bool ServerSide::read_head() {
  impl_->parser.emplace();
  impl_->parser->body_limit(boost::none);  // the test decides how large a body to send
  error_code ec;
  impl_->with_stream([&](auto& stream) { bhttp::read_header(stream, impl_->buffer, *impl_->parser, ec); });
  if (ec) return false;
  const auto& head = impl_->parser->get();
  target_ = std::string(head.target());
  expects_continue_ = boost::beast::iequals(head[bhttp::field::expect], "100-continue");
  content_length_ = impl_->parser->content_length().value_or(0);
  return true;
}

bool ServerSide::read_body() {
  error_code ec;
  impl_->with_stream([&](auto& stream) { bhttp::read(stream, impl_->buffer, *impl_->parser, ec); });
  if (ec) return false;
  std::lock_guard lock(server_.impl_->mutex);
  ++server_.impl_->requests;
  return true;
}

void ServerSide::drain(size_t at_most) {
  size_t dropped = std::min(impl_->buffer.size(), at_most);
  impl_->buffer.consume(impl_->buffer.size());
  std::vector<char> room(16 * 1024);
  while (dropped < at_most) {
    error_code ec;
    size_t n = 0;
    impl_->with_stream([&](auto& stream) { n = stream.read_some(net::buffer(room.data(), std::min(room.size(), at_most - dropped)), ec); });
    if (ec) return;
    dropped += n;
  }
}

void ServerSide::send(std::string_view bytes) {
  error_code ec;
  impl_->with_stream([&](auto& stream) { net::write(stream, net::buffer(bytes), ec); });
}

void ServerSide::stall(std::chrono::milliseconds time) {
  std::unique_lock lock(server_.impl_->mutex);
  server_.impl_->stopping_changed.wait_for(lock, time, [this] { return server_.impl_->stopping; });
}

void ServerSide::close() {
  auto& socket = impl_->lowest();
  if (!socket.is_open()) return;
  {
    std::lock_guard lock(server_.impl_->mutex);
    server_.impl_->open_sockets.erase(socket.native_handle());
  }
  error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

ScriptedServer::ScriptedServer(Script script, ServerTls tls) : impl_(std::make_unique<Impl>()) {
  impl_->script = std::move(script);
  if (tls != ServerTls::none) {
    const auto ca = fake::make_certificate_authority("healthhook test CA");
    const auto certificate = tls == ServerTls::valid
                                 ? fake::make_server_certificate(ca, {"localhost"}, {"127.0.0.1"})
                                 : fake::make_server_certificate(ca, {"wrong.example"}, {});
    ca_pem_ = ca.cert_pem;
    impl_->tls.emplace(ssl::context::tls_server);
    impl_->tls->use_certificate_chain(net::buffer(certificate.cert_pem));
    impl_->tls->use_private_key(net::buffer(certificate.key_pem), ssl::context::pem);
  }
  const tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();

  impl_->accepting = std::thread([this] {
    for (;;) {
      tcp::socket socket(impl_->io);
      error_code ec;
      impl_->acceptor.accept(socket, ec);
      std::lock_guard lock(impl_->mutex);
      if (impl_->stopping) return;
      if (ec) continue;
      ++impl_->accepted;
      impl_->open_sockets.insert(socket.native_handle());
      impl_->connections.emplace_back([this, accepted = std::move(socket)]() mutable {
        auto side = std::make_unique<ServerSide::Impl>();
        if (impl_->tls) {
          side->tls.emplace(std::move(accepted), *impl_->tls);
          error_code handshake;
          side->tls->handshake(ssl::stream_base::server, handshake);
          if (const char* name = SSL_get_servername(side->tls->native_handle(), TLSEXT_NAMETYPE_host_name)) {
            std::lock_guard sni_lock(impl_->mutex);
            impl_->last_sni = name;
          }
          if (handshake) {
            ServerSide rejected(*this, std::move(side));
            return;
          }
        } else {
          side->plain.emplace(std::move(accepted));
        }
        ServerSide connection(*this, std::move(side));
        impl_->script(connection);
      });
    }
  });
}

ScriptedServer::~ScriptedServer() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    for (int fd : impl_->open_sockets) ::shutdown(fd, SHUT_RDWR);  // wakes scripts blocked in a read
  }
  impl_->stopping_changed.notify_all();
  {
    tcp::socket wake(impl_->io);  // the accept loop sees `stopping` once accept returns
    error_code ignored;
    wake.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_), ignored);
  }
  impl_->accepting.join();
  std::vector<std::thread> connections;
  {
    std::lock_guard lock(impl_->mutex);
    connections.swap(impl_->connections);
  }
  for (auto& connection : connections) connection.join();
}

size_t ScriptedServer::connections() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->accepted;
}

size_t ScriptedServer::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

std::string ScriptedServer::last_sni() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->last_sni;
}

std::string ok_response(std::string_view body, std::string_view extra_headers) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + std::string(extra_headers) +
         "\r\n" + std::string(body);
}

}  // namespace hh::test
