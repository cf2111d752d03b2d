#pragma once
// The one fake in the test suite: the remote health-data service's read endpoints,
// served over HTTP/1.1 (keep-alive, Content-Length or chunked, optional gzip) and HTTPS
// with certificates generated at start-up, on 127.0.0.1 only, from a thread of its own.
//
//   GET /v2/timeseries/workouts/{workout_id}/stream        fake_bodies.h stream_body
//   GET /v2/summary/{resource}/{user_id}?start_date=&end_date=&provider=   ({"meals": …} for meal)
//   GET /v2/summary/profile/{user_id}?provider=            one object, no window
//   GET /v2/timeseries/{user_id}/{resource}/grouped?start_date=&end_date=&provider=&cursor=
//   GET /v2/providers                                      a JSON array
//   POST /v2/user/refresh/{user_id}?timeout=               a Refresh result (set_refresh_answer)
//   DELETE /v2/user/{user_id}/{provider}                   {"success": …} (set_deregister_success)
// The two user calls follow the service interface (service-interface.md): user_id must
// be a UUID and timeout a number from 5 to 60 (default 10), else 422. The rest of the
// interface (user update, link codes, bulk export/import, lab reports, lab lookups, and
// the management endpoint's GET /v1/org/{org_id}/team) is interface_endpoints.h's.
//
// Every request must carry the API key in the configured header (401 otherwise, like the
// service); the management endpoint only the management key in X-Management-Key. Faults
// are injected per path for the next N requests (inject()).
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/fake_service/interface_endpoints.h"

namespace hh::fake {

struct Fault {
  enum class Kind {
    none,                    // answer normally (to aim a later fault at the Nth request)
    status,                  // answer `status` with `body` (and Retry-After when set); keep-alive
    stall_head,              // wait `stall` before answering at all
    stall_body,              // send the head and half the body, wait `stall`, send the rest
    drop_mid_body,           // send the head (full Content-Length) and half the body, then close
    malformed_json,          // 200 with the body cut in half (valid HTTP, invalid JSON)
    close_without_response,  // read the request, close the connection
    drip_body,               // send the head, then the body one byte every `stall` (never idle for long)
    bytes_after_answer,      // answer normally and keep alive, then after `stall` send `body` too: bytes
                             // no request asked for (a second answer, or the rest of a body whose
                             // Content-Length left it out)
  };
  Kind kind = Kind::none;
  unsigned status = 500;
  std::optional<std::string> retry_after;
  std::string body;                       // status: "" gives {"detail":"<reason>"}
  std::chrono::milliseconds stall{0};
  bool gzip_body = false;                 // status: `body` gzip-encoded for a client that accepts it
};

enum class TlsMode {
  plain,        // http://127.0.0.1:PORT
  valid,        // https://localhost:PORT, certificate for localhost + 127.0.0.1 by ca_pem()
  wrong_host,   // certificate by ca_pem() but only for "wrong.example"
  unknown_ca,   // certificate for localhost by another CA, not ca_pem()
};

// What POST /v2/user/refresh/{user_id} answers besides success and user_id.
struct RefreshAnswer {
  bool success = true;
  std::vector<std::string> refreshed_sources = {"oura/sleep", "oura/activity"};
  std::vector<std::string> in_progress_sources = {"fitbit/heartrate"};
  std::vector<std::string> failed_sources = {"garmin/workouts/stream"};
};

struct FakeOptions {
  TlsMode tls = TlsMode::plain;
  std::string api_key_header = "x-vital-api-key";
  std::string api_key = "test-api-key";
  std::string management_key = "test-management-key";  // X-Management-Key of GET /v1/org/{org_id}/team
  bool gzip = false;                  // gzip 2xx bodies for clients that accept it
  bool chunked = false;               // Transfer-Encoding: chunked instead of Content-Length
  size_t default_stream_points = 120;
  size_t timeseries_pages = 3;        // pages per grouped window
  bool cursor_loops = false;          // a lying service: the last grouped page points back to page 1
  bool cursor_repeats = false;        // or to itself (its next_cursor is the cursor it was asked for)
  size_t samples_per_page = 50;
  size_t max_summaries_per_page = 400;
  // A lying service (a mix-up at the service or in a cache before it): summary lists and
  // the profile answer with this user's items (their user_id, ids and values), and they and
  // grouped timeseries with this provider's (source.provider, a grouped answer's group)
  // instead of the one asked for. "": the one asked for, as the service does.
  std::string answer_user_id;
  std::string answer_provider;
};

struct RecordedRequest {
  std::string method;       // "GET", "POST", "DELETE", …
  std::string target;       // as requested (path + query)
  std::string path;         // decoded path, no query
  std::map<std::string, std::string> query;  // decoded query parameters
  std::vector<std::pair<std::string, std::string>> query_list;  // every parameter in order, repeats kept
  std::string content_type;
  std::string body;         // the request body as sent
  std::string api_key;      // the value of the API-key header as sent ("" when absent)
  std::string management_key;  // X-Management-Key as sent ("" when absent)
  bool authorized = false;
  std::string accept_encoding;
  uint64_t connection_id = 0;
  std::string sni;          // TLS server name the client sent ("" for none / plain)
  std::string fault;        // the fault applied ("" none)
  unsigned status = 0;      // what was answered (0: no answer)
};

class FakeService {
 public:
  explicit FakeService(FakeOptions options = {});
  ~FakeService();
  FakeService(const FakeService&) = delete;
  FakeService& operator=(const FakeService&) = delete;

  uint16_t port() const;
  // "https://localhost:PORT" with TLS, "http://127.0.0.1:PORT" without.
  std::string base_url() const;
  // PEM of the CA that clients should trust (it signed the valid and wrong_host certificates).
  const std::string& ca_pem() const;

  // The next `times` authorised requests to `path` (decoded, without query; "*" = any
  // path) get `fault`; times < 0: every one from now on.
  void inject(const std::string& path, Fault fault, int times = 1);
  void clear_faults();
  void set_stream_points(const std::string& workout_id, size_t points);
  void set_gzip(bool gzip);
  void set_chunked(bool chunked);
  void set_refresh_answer(RefreshAnswer answer);
  void set_deregister_success(bool success);
  // The rest of the interface's answers and state (teams, link codes, connections, jobs).
  InterfaceEndpoints& interface();

  std::vector<RecordedRequest> requests() const;
  // The requests to any path but `path` (e.g. all but the provider list a server fetches
  // at start).
  std::vector<RecordedRequest> requests_except(const std::string& path) const;
  size_t request_count(const std::string& path) const;
  size_t connections_accepted() const;
  size_t handshakes_failed() const;
  // The client ends a handshake it rejects with an alert and goes on at once; the
  // server sees the failure a moment later on its own thread. Waits (bounded) until
  // `count` failures are seen and returns the number seen.
  size_t wait_for_handshakes_failed(size_t count, std::chrono::milliseconds limit = std::chrono::seconds(5)) const;
  // The most requests that were being answered at the same time.
  size_t max_concurrent_requests() const;
  // Closes every connection that is waiting for its next request (as servers do with
  // idle keep-alive connections). Returns how many.
  size_t close_idle_connections();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hh::fake
