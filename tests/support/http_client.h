#pragma once
// A small synchronous HTTP/1.1 client over 127.0.0.1 for tests: keep-alive, reconnects
// when the server closed the connection, and signs webhook deliveries like the service.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hh::test {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  int status = 0;  // 0: no response (connection closed or failed)
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// svix-id / svix-timestamp / svix-signature (or webhook-* when `family` is "webhook").
Headers signature_headers(const std::string& secret, const std::string& id, const std::string& timestamp,
                          const std::string& body, const std::string& family = "svix");

class HttpClient {
 public:
  explicit HttpClient(unsigned short port, std::chrono::seconds timeout = std::chrono::seconds(30));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResponse request(const std::string& method, const std::string& target, const std::string& body = "",
                       const Headers& headers = {});
  HttpResponse get(const std::string& target, const Headers& headers = {}) { return request("GET", target, "", headers); }
  // POST to /webhooks signed with `secret` (timestamp: now unless given).
  HttpResponse post_webhook(const std::string& secret, const std::string& message_id, const std::string& body,
                            const std::string& timestamp = "", const std::string& path = "/webhooks");
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sends raw bytes on a fresh connection and collects what the server answers until it
// closes the connection or `timeout` passes (for malformed-request and slow-client tests).
struct RawReply {
  std::string received;
  bool closed_by_server = false;  // false: we gave up after `timeout`
  bool starts_with(std::string_view prefix) const { return received.starts_with(prefix); }
};
RawReply raw_exchange(unsigned short port, const std::string& bytes, std::chrono::milliseconds timeout);

}  // namespace hh::test
