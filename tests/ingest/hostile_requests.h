#pragma once
// What the hostile-client tests (hostile_clients_test, hostile_uploads_test) send and look
// at: a small signed-format delivery, headers anyone can forge, an upload's head, the
// server's stored deliveries and log lines.
#include <cstdint>
#include <string>

#include "store/sqlite/database.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

namespace hh::test::hostile {

inline const std::string kBody =
    R"({"event_type":"daily.data.steps.created","data":{"data":[{"timestamp":"2024-05-16T10:00:00+00:00","unit":"count","value":237}],"source":{"provider":"oura","type":"ring"},"user_id":"u1"},"user_id":"u1"})";

inline constexpr uint64_t kMiB = 1024 * 1024;

// Headers anyone can forge: complete, fresh, with a signature that cannot match. They
// pass every check made before the body is read.
inline std::string signed_looking_headers(const std::string& id) {
  return "svix-id: " + id + "\r\nsvix-timestamp: " + now_seconds() + "\r\nsvix-signature: v1," +
         std::string(43, 'A') + "=\r\n";
}

// A whole delivery signed with `secret` (a wrong one: a 401 once its body is read), as
// the service sends it on a keep-alive connection.
inline std::string signed_request(const std::string& secret, const std::string& id, const std::string& body = kBody) {
  std::string request = "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n";
  for (const auto& [name, value] : signature_headers(secret, id, now_seconds(), body)) request += name + ": " + value + "\r\n";
  return request + "\r\n" + body;
}

inline std::string upload_head(uint64_t length, const std::string& extra_headers) {
  return "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(length) + "\r\n" + extra_headers + "\r\n";
}

inline int64_t deliveries(const std::string& database, const std::string& where = "1") {
  auto db = hh::store::open_for_reading(database);
  if (!db.ok()) return -1;
  return db->query_int("SELECT count(*) FROM deliveries WHERE " + where)->value_or(-1);
}

// Memory bounds hold for the server as shipped. Under a sanitizer its allocator keeps
// freed memory in quarantine (hundreds of MiB) and pads every block, so peak RSS says
// nothing about our bounds there; the other checks of those tests still run. (The tests
// and the server are built with the same flags. GCC says so with __SANITIZE_*__, clang 14
// only through __has_feature.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kMemoryIsOurs = false;
#elif defined(__has_feature)
inline constexpr bool kMemoryIsOurs = !(__has_feature(address_sanitizer) || __has_feature(thread_sanitizer));
#else
inline constexpr bool kMemoryIsOurs = true;
#endif

inline size_t lines_containing(const ServerProcess& server, const std::string& needle) {
  size_t n = 0;
  for (const auto& line : server.log_lines()) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace hh::test::hostile
