#include "tests/support/http_client.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>

#include "receiver/signature/webhook_signature.h"
#include "tests/support/temp_dir.h"

namespace hh::test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

Headers signature_headers(const std::string& secret, const std::string& id, const std::string& timestamp,
                          const std::string& body, const std::string& family) {
  auto signature = signature::sign(secret, id, timestamp, body);
  if (!signature) throw std::runtime_error(signature.error());
  return {{family + "-id", id}, {family + "-timestamp", timestamp}, {family + "-signature", *signature}};
}

struct HttpClient::Impl {
  net::io_context io;
  unsigned short port;
  std::chrono::seconds timeout;
  std::unique_ptr<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  bool connect() {
    stream = std::make_unique<beast::tcp_stream>(io);
    stream->expires_after(timeout);
    beast::error_code ec;
    stream->connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
    buffer.clear();
    if (ec) stream.reset();
    return !ec;
  }

  HttpResponse exchange(const http::request<http::string_body>& req) {
    if (!stream && !connect()) return {};
    stream->expires_after(timeout);
    beast::error_code ec;
    http::write(*stream, req, ec);
    if (ec) return {};
    http::response_parser<http::string_body> parser;
    parser.body_limit(1024 * 1024 * 1024);
    http::read(*stream, buffer, parser, ec);
    if (ec) {
      stream.reset();
      return {};
    }
    auto res = parser.release();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    for (const auto& field : res) {
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = std::string(field.value());
    }
    if (!res.keep_alive()) stream.reset();
    return out;
  }
};

HttpClient::HttpClient(unsigned short port, std::chrono::seconds timeout) : impl_(std::make_unique<Impl>()) {
  impl_->port = port;
  impl_->timeout = timeout;
}

HttpClient::~HttpClient() = default;

void HttpClient::close() { impl_->stream.reset(); }

HttpResponse HttpClient::request(const std::string& method, const std::string& target, const std::string& body,
                                 const Headers& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  req.keep_alive(true);
  // One retry on a fresh connection: the server may have closed an idle keep-alive one.
  const bool had_connection = impl_->stream != nullptr;
  HttpResponse response = impl_->exchange(req);
  if (response.status == 0 && had_connection) {
    impl_->stream.reset();
    response = impl_->exchange(req);
  }
  return response;
}

HttpResponse HttpClient::post_webhook(const std::string& secret, const std::string& message_id,
                                      const std::string& body, const std::string& timestamp, const std::string& path) {
  Headers headers = signature_headers(secret, message_id, timestamp.empty() ? now_seconds() : timestamp, body);
  headers.emplace_back("content-type", "application/json");
  return request("POST", path, body, headers);
}

RawReply raw_exchange(unsigned short port, const std::string& bytes, std::chrono::milliseconds timeout) {
  net::io_context io;
  net::ip::tcp::socket socket(io);
  socket.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  net::write(socket, net::buffer(bytes));
  RawReply reply;
  char buf[4096];
  bool timed_out = false;
  net::steady_timer timer(io);
  timer.expires_after(timeout);
  timer.async_wait([&](beast::error_code ec) {
    if (ec) return;
    timed_out = true;
    socket.close();
  });
  std::function<void()> read_more = [&] {
    socket.async_read_some(net::buffer(buf), [&](beast::error_code ec, size_t n) {
      reply.received.append(buf, n);
      if (ec) {
        reply.closed_by_server = !timed_out;
        timer.cancel();
        return;
      }
      read_more();
    });
  };
  read_more();
  io.run();
  return reply;
}

}  // namespace hh::test
