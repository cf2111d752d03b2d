// noop_server: the HTTP ceiling of this machine. A minimal Beast server that reads each
// request body (64 KiB reserved read buffer, as healthhook does) and answers 204, nothing
// else: no signature, no store. loadgen against it measures what the network stack and
// Beast alone allow; bench/run reports healthhook's figures as a ratio to it.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
constexpr auto kToken = net::as_tuple(net::use_awaitable);

net::awaitable<void> session(beast::tcp_stream stream) {
  beast::flat_buffer buffer;
  buffer.reserve(64 * 1024);
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, kToken);
    if (ec) break;
    http::response<http::empty_body> res{http::status::no_content, 11};
    res.keep_alive(parser.get().keep_alive());
    auto [wec, wn] = co_await http::async_write(stream, res, kToken);
    if (wec || !res.keep_alive()) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
}

net::awaitable<void> listen(net::ip::tcp::acceptor& acceptor) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kToken);
    if (ec) co_return;
    socket.set_option(net::ip::tcp::no_delay(true));
    auto ex = socket.get_executor();
    net::co_spawn(ex, session(beast::tcp_stream(std::move(socket))), net::detached);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: noop_server PORT [THREADS]\n";
    return 2;
  }
  const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  net::io_context io(threads);
  net::ip::tcp::acceptor acceptor(io, {net::ip::make_address("127.0.0.1"), port});
  net::co_spawn(io, listen(acceptor), net::detached);
  std::cout << "listening " << acceptor.local_endpoint().port() << std::endl;
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
}
