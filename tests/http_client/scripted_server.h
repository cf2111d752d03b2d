#pragma once
// A loopback server for the HTTP client core's tests that plays a script per connection:
// read a request, send these bytes, stall, close. Plain TCP or TLS with a certificate
// generated at test time (tests/fake_service/test_certificates.h). Blocking Asio on
// threads of its own: one accepts, one per connection runs the script.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace hh::test {

class ScriptedServer;

// The server's side of one accepted connection, handed to the script.
class ServerSide {
 public:
  ~ServerSide();
  ServerSide(const ServerSide&) = delete;
  ServerSide& operator=(const ServerSide&) = delete;

  // Reads one request whole. False when the client closed the connection or sent
  // something that is not HTTP (a TLS ClientHello to a plain server).
  bool read_request();
  // Reads a request's head only: its body is left for read_body(), or unread (a server
  // that refuses a body after the head). False as for read_request().
  bool read_head();
  bool expects_continue() const { return expects_continue_; }  // the head read_head() read asked "Expect: 100-continue"
  uint64_t content_length() const { return content_length_; }   // that head's Content-Length (0 without one)
  // Reads the body of the request whose head read_head() read; counts the request.
  bool read_body();
  // Reads and drops what the client still sends, up to `at_most` bytes or its close.
  void drain(size_t at_most);
  const std::string& target() const { return target_; }
  void send(std::string_view bytes);
  // Waits `time`, or less when the server is being destroyed.
  void stall(std::chrono::milliseconds time);
  void close();

 private:
  friend class ScriptedServer;
  struct Impl;
  ServerSide(ScriptedServer& server, std::unique_ptr<Impl> impl);
  ScriptedServer& server_;
  std::unique_ptr<Impl> impl_;
  std::string target_;
  bool expects_continue_ = false;
  uint64_t content_length_ = 0;
};

enum class ServerTls {
  none,        // plain TCP
  valid,       // a certificate for localhost and 127.0.0.1, signed by ca_pem()
  wrong_host,  // a certificate signed by ca_pem() for wrong.example only
};

class ScriptedServer {
 public:
  using Script = std::function<void(ServerSide&)>;
  explicit ScriptedServer(Script script, ServerTls tls = ServerTls::none);
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  uint16_t port() const { return port_; }
  const std::string& ca_pem() const { return ca_pem_; }  // empty without TLS
  size_t connections() const;                            // accepted
  size_t requests() const;                               // read whole by read_request()
  std::string last_sni() const;                          // the server name the last TLS client sent

 private:
  friend class ServerSide;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
  std::string ca_pem_;
};

// The usual answer: 200 with `body` and a Content-Length.
std::string ok_response(std::string_view body, std::string_view extra_headers = "");

}  // namespace hh::test
