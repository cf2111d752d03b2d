// sqlite_upsert: SQLite's own latest-wins upsert rate for sample rows, the ceiling for
// healthhook's processing figures. Same schema and pragmas as healthhook (it opens the
// database through store::open_for_writing), rows shaped like the heartrate benchmark
// (64 series, a third of each batch overwriting earlier samples), 10,000-row
// transactions with one prepared statement, synchronous=FULL.
//
//   sqlite_upsert DB_FILE [ROWS]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "store/sqlite/database.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sqlite_upsert DB_FILE [ROWS]\n");
    return 2;
  }
  const int64_t rows = argc > 2 ? std::atoll(argv[2]) : 2000000;
  auto db = hh::store::open_for_writing(argv[1], {});
  if (!db) {
    std::fprintf(stderr, "sqlite_upsert: %s\n", db.error().c_str());
    return 1;
  }
  constexpr int kSeries = 64;
  constexpr int kPerTransaction = 10000;
  {
    auto txn = hh::sqlite::Transaction::begin(*db);
    auto series = db->prepare(
        "INSERT INTO series (series_id, user_id, resource, provider, source_type) VALUES (?1, 'u' || ?1, "
        "'heartrate', 'apple_health_kit', 'watch') ON CONFLICT DO NOTHING");
    for (int64_t s = 1; s <= kSeries; ++s) (void)series->bind(1, s).run();
    (void)txn->commit();
  }
  auto upsert = db->prepare(
      "INSERT INTO samples (series_id, t_ms, timezone_offset, value, unit, type, seq) VALUES (?1, ?2, ?3, ?4, ?5, NULL, "
      "?6) ON CONFLICT (series_id, t_ms) DO UPDATE SET timezone_offset = excluded.timezone_offset, value = "
      "excluded.value, unit = excluded.unit, type = excluded.type, seq = excluded.seq WHERE excluded.seq > samples.seq");
  if (!upsert) {
    std::fprintf(stderr, "sqlite_upsert: %s\n", upsert.error().c_str());
    return 1;
  }
  const auto started = std::chrono::steady_clock::now();
  int64_t done = 0, seq = 1;
  while (done < rows) {
    auto txn = hh::sqlite::Transaction::begin(*db);
    for (int i = 0; i < kPerTransaction && done < rows; ++i, ++done) {
      // Batches of 180 samples per series; each batch starts 120 minutes after the
      // previous one of its series, so 60 of its 180 samples overwrite older values.
      const int64_t batch = done / 180;
      const int64_t series_id = batch % kSeries + 1;
      const int64_t window = batch / kSeries;
      const int64_t t_ms = 1704067200000 + (window * 120 + done % 180) * 60000;
      if (done % 180 == 0) ++seq;
      (void)upsert->bind(1, series_id).bind(2, t_ms).bind(3, int64_t{3600}).bind(4, int64_t{55 + done % 60})
          .bind_static(5, "bpm").bind(6, seq).run();
    }
    if (auto committed = txn->commit(); !committed) {
      std::fprintf(stderr, "sqlite_upsert: %s\n", committed.error().c_str());
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("sqlite_upsert rows=%lld seconds=%.2f rows_per_s=%.0f\n", static_cast<long long>(rows), seconds,
              static_cast<double>(rows) / seconds);
  return 0;
}
