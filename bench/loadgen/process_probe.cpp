#include "bench/loadgen/process_probe.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace hh::bench {

int64_t read_status_kib(int pid, const char* field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  const size_t length = std::strlen(field);
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, length, field) == 0 && line.size() > length && line[length] == ':') {
      return std::stoll(line.substr(length + 1));
    }
  }
  return -1;
}

int64_t read_cpu_ms(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t name_end = stat.rfind(')');  // the command name may hold spaces
  if (name_end == std::string::npos) return -1;
  std::istringstream fields(stat.substr(name_end + 2));
  std::string skip;
  for (int field = 3; field < 14; ++field) fields >> skip;  // state ... cmajflt
  long long utime = 0, stime = 0;
  if (!(fields >> utime >> stime)) return -1;
  return (utime + stime) * 1000 / ::sysconf(_SC_CLK_TCK);
}

int64_t count_open_fds(int pid) {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec);
  if (ec) return -1;
  int64_t count = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return -1;
    ++count;
  }
  return count;
}

LagProbe::~LagProbe() {
  if (db_) sqlite3_close(db_);
}

bool LagProbe::open(const std::string& path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::cerr << "loadgen: cannot open " << path << "\n";
    sqlite3_close(db_);
    db_ = nullptr;
    return false;
  }
  sqlite3_busy_timeout(db_, 1000);
  return true;
}

ProcessorLag LagProbe::sample() {
  ProcessorLag lag;
  if (!db_) return lag;
  sqlite3_stmt* stmt = nullptr;
  const char* sql =
      "SELECT (SELECT coalesce(max(seq),0) FROM inbox), p.applied_seq, "
      "(SELECT received_at FROM inbox WHERE seq > p.applied_seq ORDER BY seq LIMIT 1) "
      "FROM processor_state p";
  if (sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    lag.last_seq = sqlite3_column_int64(stmt, 0);
    lag.deliveries = lag.last_seq - sqlite3_column_int64(stmt, 1);
    lag.seconds = 0;
    if (sqlite3_column_type(stmt, 2) != SQLITE_NULL) {
      const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
      lag.seconds = static_cast<double>(now_ms - sqlite3_column_int64(stmt, 2)) / 1000.0;
    }
  }
  sqlite3_finalize(stmt);
  return lag;
}

}  // namespace hh::bench
