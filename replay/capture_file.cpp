#include "replay/capture_file.h"

#include <fcntl.h>
#include <simdjson.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/base64.h"
#include "common/json_scan.h"
#include "common/json_writer.h"

namespace hh::replay {
namespace {

namespace od = simdjson::ondemand;

std::string hex_byte(char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const auto u = static_cast<unsigned char>(c);
  return {kHex[u >> 4], kHex[u & 15]};
}

constexpr size_t kMaxIdBytes = 256;          // as the receiver (signature::kMaxMessageIdBytes)
constexpr int64_t kMaxTimestamp = 253402300799;  // 9999-12-31T23:59:59Z: times in ms stay in range
constexpr size_t kReadChunkBytes = 1 << 20;  // one read(2) per MiB
constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

std::string json_error(std::string_view member, simdjson::error_code code) {
  std::string text(member);
  if (!text.empty()) text.append(": ");
  switch (code) {
    case simdjson::INCORRECT_TYPE: text.append("wrong type"); break;
    case simdjson::NUMBER_OUT_OF_RANGE: text.append("number out of range"); break;
    case simdjson::STRING_ERROR: text.append("invalid string escape"); break;
    case simdjson::UTF8_ERROR: text.append("not valid UTF-8"); break;
    default: text.append("not valid JSON (").append(simdjson::error_message(code)).append(")");
  }
  return text;
}

// Why a line is no JSON object, in its own words: not JSON at all, another kind of value,
// something after the object (which simdjson calls "JSON document ended early" when it is
// no JSON), or simdjson's reason.
std::string line_problem(std::string_view line, simdjson::error_code code) {
  if (line.starts_with(kUtf8ByteOrderMark)) return "starts with a byte order mark (U+FEFF), which JSON does not allow";
  json::Scanner scanner(line);
  scanner.skip_space();
  const char first = scanner.peek();
  if (scanner.value(json::kSimdjsonMaxDepth)) {
    scanner.skip_space();
    if (!scanner.at_end()) return first == '{' ? "unexpected content after the object" : "not a JSON object";
    if (first != '{') return "not a JSON object";
  } else if (first != '{' && first != '[') {
    return "not JSON (each line is one JSON object)";
  }
  return code == simdjson::INCORRECT_TYPE ? "not a JSON object" : json_error("", code);
}

// Why the first bytes of a file say it is no capture file (compressed, or binary: a NUL in
// its first line), or "" when they may be one. Read line by line, such a file would give an
// error for every newline byte it happens to hold. `name` goes into the advice.
std::string binary_problem(std::string_view start, std::string_view name) {
  struct Compressed {
    std::string_view magic, format, cat;
  };
  static constexpr Compressed kCompressed[] = {{"\x1F\x8B", "gzip", "zcat"},
                                               {"\x28\xB5\x2F\xFD", "zstd", "zstdcat"},
                                               {"\xFD" "7zXZ", "xz", "xzcat"}};
  for (const auto& c : kCompressed) {
    if (start.starts_with(c.magic)) {
      return std::string(c.format) + "-compressed? use " + std::string(c.cat) + " " + std::string(name) +
             " | healthhook replay -";
    }
  }
  const std::string_view first_line = start.substr(0, start.find('\n'));
  if (first_line.find('\0') != std::string_view::npos) return "a NUL byte in its first line (a binary file?)";
  return {};
}

// An id the receiver could have stored, or why not (`member` names it in the error).
Result<void> check_id(std::string_view member, std::string_view id) {
  const std::string name(member);
  if (id.empty()) return fail(name + ": empty");
  if (id.size() > kMaxIdBytes) return fail(name + ": longer than 256 bytes");
  // What no header can carry (HTTP field values take tab, space and visible bytes):
  // the receiver never stores it, so neither does an offline replay.
  const auto control = std::find_if(id.begin(), id.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && u != '\t') || u == 0x7f;
  });
  if (control != id.end()) return fail(name + ": holds a control character (U+00" + hex_byte(*control) + ")");
  // HTTP trims a header value's edges: the receiver could never have stored it so.
  if (id.front() == ' ' || id.front() == '\t' || id.back() == ' ' || id.back() == '\t') {
    return fail(name + ": starts or ends with a space (no header value does)");
  }
  return {};
}

// `"id":"…"`, or `"id_base64":"…"` for an id whose bytes are not UTF-8 (a header value may
// hold any visible byte): a JSON string would replace them, and the replayed delivery
// would be another message (a second copy, a signature that no longer matches).
void append_id(std::string& out, std::string_view id) {
  if (json::is_valid_utf8(id)) {
    out.append("\"id\":");
    json::append_string(out, id);
  } else {
    out.append("\"id_base64\":\"").append(base64_encode(id)).push_back('"');
  }
}

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

// Pads `text` for simdjson in place (simdjson 3.0.1 does not pad for us).
void pad(std::string& text) { text.reserve(text.size() + simdjson::SIMDJSON_PADDING); }

}  // namespace

void append_headers_json(std::string& out, std::span<const CaptureHeader> headers) {
  out.push_back('{');
  for (size_t i = 0; i < headers.size(); ++i) {
    if (i > 0) out.push_back(',');
    json::append_string(out, headers[i].name);
    out.push_back(':');
    json::append_string(out, headers[i].value);
  }
  out.push_back('}');
}

void append_capture_line(std::string& out, std::string_view id, int64_t timestamp,
                         std::span<const CaptureHeader> headers, std::string_view body) {
  out.push_back('{');
  append_id(out, id);
  out.append(",\"timestamp\":");
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, timestamp);
  out.append(digits, end);
  out.append(",\"headers\":");
  append_headers_json(out, headers);
  if (json::is_valid_utf8(body)) {
    out.append(",\"body\":");
    json::append_string(out, body);  // lossless: valid UTF-8 is never replaced
  } else {
    out.append(",\"body_base64\":\"");
    out.append(base64_encode(body));
    out.push_back('"');
  }
  out.append("}\n");
}

void append_removed_capture_line(std::string& out, std::string_view id, int64_t timestamp, int64_t removed_at_ms,
                                 std::string_view body_sha256) {
  std::string removed;
  json::ObjectWriter(removed).integer("removed_at_ms", removed_at_ms).string("sha256", body_sha256).close();
  out.push_back('{');
  append_id(out, id);
  out.push_back(',');
  // The rest as an object of its own, its braces dropped.
  std::string rest;
  json::ObjectWriter(rest).integer("timestamp", timestamp).raw("headers", "{}").raw("body_removed", removed).close();
  out.append(rest, 1, std::string::npos);
  out.push_back('\n');
}

struct CaptureParser::Impl {
  od::parser parser;
  std::string padded;  // parse_headers' copy of its input

  // Reads an object of string values.
  static Result<void> read_headers(od::value value, std::vector<CaptureHeader>& headers) {
    od::object object;
    if (auto code = value.get_object().get(object)) return fail(json_error("headers", code));
    for (auto field : object) {
      std::string_view name, text;
      if (auto code = field.unescaped_key().get(name)) return fail(json_error("headers", code));
      if (auto code = field.value().get_string().get(text)) {
        return fail(json_error("headers." + std::string(name), code));
      }
      headers.push_back({std::string(name), std::string(text)});
    }
    return {};
  }
};

CaptureParser::CaptureParser() : impl_(std::make_unique<Impl>()) {}
CaptureParser::~CaptureParser() = default;

Result<void> CaptureParser::parse_headers(std::string_view json, std::vector<CaptureHeader>& headers) {
  headers.clear();
  impl_->padded.assign(json);
  pad(impl_->padded);
  od::document doc;
  if (auto code = impl_->parser.iterate(impl_->padded.data(), impl_->padded.size(), impl_->padded.capacity()).get(doc)) {
    return fail(json_error("headers", code));
  }
  od::value root;
  if (auto code = doc.get_value().get(root)) return fail(json_error("headers", code));
  return Impl::read_headers(root, headers);
}

Result<void> CaptureParser::parse_line(std::string& line, CaptureRecord& record) {
  record.id.clear();
  record.headers.clear();
  record.body.clear();
  record.body_removed = false;
  pad(line);
  od::document doc;
  if (auto code = impl_->parser.iterate(line.data(), line.size(), line.capacity()).get(doc)) {
    return fail(line_problem(line, code));
  }
  od::object object;
  if (auto code = doc.get_object().get(object)) return fail(line_problem(line, code));
  bool has_id = false, has_id_base64 = false, has_timestamp = false, has_headers = false, has_body = false, has_base64 = false,
       has_removed = false;
  // An id the receiver could not have stored is refused, but for a line whose body was
  // removed: nothing of it is stored (replay counts it), and `capture` writes an erasure's
  // placeholder so, whose id no delivery can carry on purpose (" erased:<seq>").
  Result<void> id_checked;
  for (auto field : object) {
    std::string_view key;
    if (auto code = field.unescaped_key().get(key)) return fail(json_error("", code));
    const auto twice = [&](bool& seen) {
      const bool again = seen;
      seen = true;
      return again;
    };
    od::value value;
    if (auto code = field.value().get(value)) return fail(json_error(key, code));
    if (key == "id") {
      if (twice(has_id)) return fail("id: given twice");
      std::string_view id;
      if (auto code = value.get_string().get(id)) return fail(json_error("id", code));
      id_checked = check_id("id", id);
      record.id.assign(id);
    } else if (key == "id_base64") {
      if (twice(has_id_base64)) return fail("id_base64: given twice");
      std::string_view text;
      if (auto code = value.get_string().get(text)) return fail(json_error("id_base64", code));
      auto decoded = base64_decode(text);
      if (!decoded) return fail("id_base64: not valid base64");
      id_checked = check_id("id_base64", *decoded);
      record.id = std::move(*decoded);
    } else if (key == "timestamp") {
      if (twice(has_timestamp)) return fail("timestamp: given twice");
      od::json_type type;
      if (auto code = value.type().get(type)) return fail(json_error("timestamp", code));
      if (type == od::json_type::string) {
        std::string_view digits;
        if (auto code = value.get_string().get(digits)) return fail(json_error("timestamp", code));
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), record.timestamp);
        if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || digits[0] == '-') {
          return fail("timestamp: expected Unix seconds, got \"" + std::string(digits.substr(0, 40)) + "\"");
        }
      } else if (value.get_int64().get(record.timestamp) || record.timestamp < 0) {
        return fail("timestamp: expected Unix seconds (an integer >= 0)");
      }
      if (record.timestamp > kMaxTimestamp) return fail("timestamp: after the year 9999");
    } else if (key == "headers") {
      if (twice(has_headers)) return fail("headers: given twice");
      if (auto read = Impl::read_headers(value, record.headers); !read) return read;
    } else if (key == "body") {
      if (twice(has_body)) return fail("body: given twice");
      std::string_view body;
      if (auto code = value.get_string().get(body)) return fail(json_error("body", code));
      record.body.assign(body);
    } else if (key == "body_base64") {
      if (twice(has_base64)) return fail("body_base64: given twice");
      std::string_view text;
      if (auto code = value.get_string().get(text)) return fail(json_error("body_base64", code));
      auto decoded = base64_decode(text);
      if (!decoded) return fail("body_base64: not valid base64");
      record.body = std::move(*decoded);
    } else if (key == "body_removed") {
      if (twice(has_removed)) return fail("body_removed: given twice");
      od::object removed;
      if (auto code = value.get_object().get(removed)) return fail(json_error("body_removed", code));
      record.body_removed = true;
    }
    // Any other member: ignored (skipped by the iterator).
  }
  // Content after the object ("{…} {…}", "{…}x").
  const char* trailing = nullptr;
  if (doc.current_location().get(trailing) == simdjson::SUCCESS) return fail("unexpected content after the object");
  if (has_id && has_id_base64) return fail("id, id_base64: give only one");
  if (!has_id && !has_id_base64) return fail("id: missing");
  if (!has_timestamp) return fail("timestamp: missing");
  if (has_body && has_base64) return fail("body, body_base64: give only one");
  if (has_removed && (has_body || has_base64)) return fail("body_removed: given with a body");
  if (!id_checked && !has_removed) return id_checked;
  if (!has_body && !has_base64 && !has_removed) return fail("body: missing (or body_base64)");
  return {};
}

struct CaptureReader::Impl {
  int fd = -1;
  bool owns_fd = false;
  std::string name;
  std::vector<char> buffer = std::vector<char>(kReadChunkBytes);
  size_t pos = 0, end = 0;
  bool eof = false;
  uint64_t line_number = 0;
  uint64_t consumed = 0;
  size_t max_line_bytes = kMaxLineBytes;
  std::string too_long_reason;  // after "line longer than N bytes"
  std::string line;
  CaptureParser parser;

  ~Impl() {
    if (owns_fd && fd >= 0) ::close(fd);
  }

  Result<void> refill() {
    pos = 0;
    end = 0;
    for (;;) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail(name + ": " + std::strerror(errno));
      if (n == 0) eof = true;
      end = static_cast<size_t>(n);
      return {};
    }
  }

  // Collects the next line into `line`; false at the end of the file. `too_long` when it
  // was cut (the rest is skipped up to its EOL).
  Result<bool> read_line(bool& too_long) {
    line.clear();
    too_long = false;
    bool any = false;
    for (;;) {
      if (pos == end) {
        if (eof) return any;
        if (auto filled = refill(); !filled) return fail(filled);
        if (end == 0) return any;
      }
      const char* start = buffer.data() + pos;
      const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end - pos));
      const size_t n = newline ? static_cast<size_t>(newline - start) : end - pos;
      any = true;
      if (!too_long) {
        if (line.size() + n > max_line_bytes) {
          too_long = true;
          line.clear();
          line.shrink_to_fit();
        } else {
          line.append(start, n);
        }
      }
      pos += n;
      consumed += n;
      if (newline) {
        ++pos;
        ++consumed;
        return true;
      }
    }
  }
};

CaptureReader::CaptureReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CaptureReader::CaptureReader(CaptureReader&&) noexcept = default;
CaptureReader& CaptureReader::operator=(CaptureReader&&) noexcept = default;
CaptureReader::~CaptureReader() = default;

Result<CaptureReader> CaptureReader::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  if (path == "-") {
    impl->fd = STDIN_FILENO;
    impl->name = "<stdin>";
  } else {
    impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (impl->fd < 0) return fail(path + ": " + std::strerror(errno));
    impl->owns_fd = true;
    impl->name = path;
    // A folder opens, then fails on the first read: refused here, as a file that is not
    // there is (a mistake on the command line, not a failed run).
    struct stat info {};
    if (::fstat(impl->fd, &info) == 0 && S_ISDIR(info.st_mode)) return fail(path + ": " + std::strerror(EISDIR));
  }
  // The first chunk now, so that a file that is no capture is refused in one line before
  // anything is stored.
  if (auto filled = impl->refill(); !filled) return fail(filled);
  const std::string problem =
      binary_problem(std::string_view(impl->buffer.data(), impl->end), path == "-" ? "FILE" : path);
  if (!problem.empty()) return fail(impl->name + ": not a capture file: " + problem);
  return CaptureReader(std::move(impl));
}

Result<CaptureReader::Next> CaptureReader::next(CaptureRecord& record, std::string& error) {
  Impl& r = *impl_;
  for (;;) {
    bool too_long = false;
    auto got = r.read_line(too_long);
    if (!got) return fail(got);
    if (!*got) return Next::end;
    ++r.line_number;
    if (too_long) {
      error = "line longer than " + std::to_string(r.max_line_bytes) + " bytes" + r.too_long_reason;
      return Next::bad_line;
    }
    if (!r.line.empty() && r.line.back() == '\r') r.line.pop_back();
    // A file saved by an editor that marks UTF-8 (Windows Notepad) starts with a byte order
    // mark, which JSON does not allow: read past it.
    if (r.line_number == 1 && r.line.starts_with(kUtf8ByteOrderMark)) r.line.erase(0, kUtf8ByteOrderMark.size());
    if (is_blank(r.line)) continue;
    if (auto parsed = r.parser.parse_line(r.line, record); !parsed) {
      error = parsed.error();
      return Next::bad_line;
    }
    return Next::record;
  }
}

void CaptureReader::limit_line_bytes(size_t bytes, std::string reason) {
  impl_->max_line_bytes = std::min(bytes, kMaxLineBytes);
  impl_->too_long_reason = std::move(reason);
}

uint64_t CaptureReader::line_number() const { return impl_->line_number; }
uint64_t CaptureReader::bytes_consumed() const { return impl_->consumed; }
const std::string& CaptureReader::name() const { return impl_->name; }

}  // namespace hh::replay
