// Fuzzes one capture-file line (replay/capture_file.h), base64 bodies included, and the
// stored-headers object the same parser reads (deliveries.headers on export).
//
// Properties besides "no crash":
//  - a line that parses holds what the grammar promises (id 1–256 bytes, timestamp in
//    0…253402300799);
//  - it round-trips: the line append_capture_line writes for the record parses back to
//    the same record, and writing that record again gives the same line (the writer's
//    form is a fixed point);
//  - headers that parse round-trip through append_headers_json the same way.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "delivery_rows_checks.h"
#include "replay/capture_file.h"

using namespace hh;

namespace {

bool same_headers(const std::vector<replay::CaptureHeader>& a, const std::vector<replay::CaptureHeader>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  }
  return true;
}

std::string written(const replay::CaptureRecord& record) {
  std::string line;
  replay::append_capture_line(line, record.id, record.timestamp, record.headers, record.body);
  if (line.empty() || line.back() != '\n') fuzz::broken("a written line does not end with LF");
  line.pop_back();
  if (line.find('\n') != std::string::npos) fuzz::broken("a written line holds a LF");
  return line;
}

void check_line(replay::CaptureParser& parser, std::string_view input) {
  static replay::CaptureRecord record, again;
  std::string line(input);  // exactly the input: parse_line pads it itself
  if (!parser.parse_line(line, record)) return;
  if (record.id.empty() || record.id.size() > 256) fuzz::broken("id length", record.id);
  if (record.timestamp < 0 || record.timestamp > 253402300799) fuzz::broken("timestamp out of range");

  std::string line2 = written(record);
  if (auto reparsed = parser.parse_line(line2, again); !reparsed) fuzz::broken("written line does not parse", reparsed.error());
  if (again.id != record.id || again.timestamp != record.timestamp || again.body != record.body ||
      !same_headers(again.headers, record.headers)) {
    fuzz::broken("round trip changed the record", line2);
  }
  if (written(again) != line2) fuzz::broken("writing is not a fixed point", line2);
}

void check_headers(replay::CaptureParser& parser, std::string_view input) {
  static std::vector<replay::CaptureHeader> headers, again;
  if (!parser.parse_headers(input, headers)) return;
  std::string json;
  replay::append_headers_json(json, headers);
  if (auto reparsed = parser.parse_headers(json, again); !reparsed) fuzz::broken("written headers do not parse", reparsed.error());
  if (!same_headers(headers, again)) fuzz::broken("headers round trip", json);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static replay::CaptureParser parser;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check_line(parser, input);
  check_headers(parser, input);
  return 0;
}
