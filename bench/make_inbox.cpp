// make_inbox: writes a heartrate inbox for measuring `healthhook rebuild`. Rows are what
// the receiver would have stored for signed deliveries (svix-* headers with a real
// signature, the body from bench/loadgen/bodies.h, ~180 samples of ~110 bytes each),
// written straight through SqliteInbox in 1,000-row transactions; nothing is processed.
//
//   make_inbox DB_FILE [--samples 1000000] [--per-delivery 180] [--users 64] [--overlap 0]
//   healthhook rebuild --database DB_FILE
//
// --overlap F: each user's next delivery starts F × per-delivery minutes before the end of
// the previous one, so that fraction of its samples replaces stored ones (latest wins).
#include <openssl/rand.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/loadgen/bodies.h"
#include "common/base64.h"
#include "receiver/signature/webhook_signature.h"
#include "store/sqlite/database.h"
#include "store/sqlite/sqlite_inbox.h"

int main(int argc, char** argv) {
  CLI::App app{"make_inbox: a heartrate inbox for measuring `healthhook rebuild`"};
  std::string path;
  int64_t samples = 1000000;
  int per_delivery = 180;
  int users = 64;
  double overlap = 0;
  std::string secret;  // default: a random one (secrets are generated, never stored)
  app.add_option("database", path, "SQLite file to create (must not exist)")->required();
  app.add_option("--samples", samples, "total samples");
  app.add_option("--per-delivery", per_delivery, "samples per delivery")->check(CLI::Range(1, 100000));
  app.add_option("--users", users, "users (series) the deliveries rotate over")->check(CLI::Range(1, 1000000));
  app.add_option("--overlap", overlap, "fraction of each delivery that overwrites earlier samples")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--secret", secret, "signing secret for the stored signature headers");
  CLI11_PARSE(app, argc, argv);
  if (secret.empty()) {
    unsigned char key[32];
    if (RAND_bytes(key, sizeof key) != 1) return 1;
    secret = "whsec_" + hh::base64_encode(std::string_view(reinterpret_cast<const char*>(key), sizeof key));
  }

  if (FILE* existing = std::fopen(path.c_str(), "rb")) {
    std::fclose(existing);
    std::fprintf(stderr, "make_inbox: %s exists; give a new file\n", path.c_str());
    return 2;
  }
  auto db = hh::store::open_for_writing(path, {});
  if (!db) {
    std::fprintf(stderr, "make_inbox: %s\n", db.error().c_str());
    return 1;
  }
  auto inbox = hh::store::SqliteInbox::create(*db);
  if (!inbox) {
    std::fprintf(stderr, "make_inbox: %s\n", inbox.error().c_str());
    return 1;
  }

  const int64_t step_minutes = std::max<int64_t>(1, static_cast<int64_t>(per_delivery * (1.0 - overlap)));
  const int64_t deliveries = (samples + per_delivery - 1) / per_delivery;
  const int64_t received_base_ms = 1717200000000;  // 2024-06-01
  std::vector<hh::store::NewDelivery> batch;
  std::vector<const hh::store::NewDelivery*> pointers;
  int64_t written_samples = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int64_t n = 0; n < deliveries;) {
    batch.clear();
    for (int i = 0; i < 1000 && n < deliveries; ++i, ++n) {
      const int user = static_cast<int>(n % users);
      const int64_t round = n / users;
      const int count = static_cast<int>(std::min<int64_t>(per_delivery, samples - written_samples));
      written_samples += count;
      hh::store::NewDelivery& d = batch.emplace_back();
      d.message_id = "msg_bench_" + std::to_string(n);
      d.received_at_ms = received_base_ms + n * 10;
      d.webhook_timestamp = d.received_at_ms / 1000;
      d.event_type = "daily.data.heartrate.created";
      d.body = hh::bench::heartrate_body(static_cast<uint64_t>(n), user, round * step_minutes, count);
      const std::string timestamp = std::to_string(*d.webhook_timestamp);
      auto signature = hh::signature::sign(secret, d.message_id, timestamp, d.body);
      if (!signature) {
        std::fprintf(stderr, "make_inbox: %s\n", signature.error().c_str());
        return 2;
      }
      d.headers_json = R"({"content-type":"application/json","svix-id":")" + d.message_id +
                       R"(","svix-timestamp":")" + timestamp + R"(","svix-signature":")" + *signature + R"("})";
    }
    pointers.clear();
    for (const auto& d : batch) pointers.push_back(&d);
    if (auto appended = inbox->append(pointers); !appended) {
      std::fprintf(stderr, "make_inbox: %s\n", appended.error().c_str());
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("make_inbox: %lld deliveries, %lld samples (%d users, overlap %.2f) in %.1f s -> %s\n",
              static_cast<long long>(deliveries), static_cast<long long>(written_samples), users, overlap, seconds,
              path.c_str());
  return 0;
}
