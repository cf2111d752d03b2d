#include "fetcher/calls/lab_reports.h"

#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "common/parsing_job_answer.h"

namespace hh::fetcher {
namespace {

struct Magic {
  std::string_view prefix;
  std::string_view content_type;
};
constexpr Magic kFormats[] = {
    {"%PDF-", "application/pdf"},
    {"\xff\xd8\xff", "image/jpeg"},
    {"\x89PNG\r\n\x1a\n", "image/png"},
};

// A file name safe inside the quoted filename="…" of a form part.
std::string form_file_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (char& c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') c = '_';
  }
  return name.empty() ? "report" : name;
}

std::string random_boundary() {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::random_device random;
  std::string boundary = "healthhook-";
  for (int i = 0; i < 32; ++i) boundary.push_back(kDigits[random() % 16]);
  return boundary;
}

Result<ParsingJobAnswer> read_job(const ServiceReply& reply) {
  const std::string unexpected = reply.request + ": unexpected answer: ";
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(reply.body);
  simdjson::dom::object object;
  if (parser.parse(padded).get_object().get(object)) return fail(unexpected + "not a JSON object");
  ParsingJobAnswer answer;
  std::string_view text;
  if (object["id"].get_string().get(text) || text.empty()) return fail(unexpected + "id: missing or not a string");
  answer.id = std::string(text);
  if (!object["status"].get_string().get(text)) answer.status = std::string(text);
  answer.body = reply.body;
  return answer;
}

}  // namespace

Result<LabReportFile> read_lab_report_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return fail(ErrorKind::data, path + ": is a folder");
  // A device or a pipe has no size to check against the limit (/dev/zero never ends).
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    return fail(ErrorKind::data, path + ": not a regular file (a PDF, JPEG or PNG file is expected)");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return fail(ErrorKind::data, path + ": " + ec.message());
  if (size > kMaxLabReportBytes) {
    return fail(ErrorKind::data, path + ": " + std::to_string(size) + " bytes, over the service's limit of 10 MB (" +
                                     std::to_string(kMaxLabReportBytes) + " bytes)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorKind::io, path + ": cannot read");
  LabReportFile file;
  file.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return fail(ErrorKind::io, path + ": cannot read");
  if (file.bytes.size() > kMaxLabReportBytes) return fail(ErrorKind::data, path + ": over the service's limit of 10 MB");
  for (const Magic& format : kFormats) {
    if (std::string_view(file.bytes).starts_with(format.prefix)) file.content_type = format.content_type;
  }
  if (file.content_type.empty()) {
    return fail(ErrorKind::data, path + ": not a PDF, JPEG or PNG file (by its first bytes)");
  }
  file.name = form_file_name(path);
  return file;
}

std::string lab_report_form(const LabReportFile& file, bool needs_human_review,
                            std::optional<std::string_view> user_id, std::string_view boundary) {
  std::string body;
  body.reserve(file.bytes.size() + 512);
  const auto part = [&](std::string_view name) {
    body.append("--").append(boundary).append("\r\nContent-Disposition: form-data; name=\"").append(name).append("\"");
  };
  part("file");
  body.append("; filename=\"").append(file.name).append("\"\r\nContent-Type: ").append(file.content_type);
  body.append("\r\n\r\n").append(file.bytes).append("\r\n");
  if (user_id) {
    part("user_id");
    body.append("\r\n\r\n").append(*user_id).append("\r\n");
  }
  part("needs_human_review");
  body.append("\r\n\r\n").append(needs_human_review ? "true" : "false").append("\r\n");
  body.append("--").append(boundary).append("--\r\n");
  return body;
}

Result<ParsingJobAnswer> upload_lab_report(const ServiceAccess& access, const LabReportFile& file,
                                           bool needs_human_review, std::optional<std::string_view> user_id) {
  std::string boundary = random_boundary();
  while (file.bytes.find(boundary) != std::string::npos) boundary = random_boundary();
  ServiceCall call;
  call.method = Method::post;
  call.segments = {"lab_report", "v1", "parser", "job"};
  call.body = RequestBody{"multipart/form-data; boundary=" + boundary,
                          lab_report_form(file, needs_human_review, user_id, boundary)};
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);
  return read_job(*reply);
}

Result<ParsingJobAnswer> get_parsing_job(const ServiceAccess& access, std::string_view job_id,
                                         size_t max_document_bytes) {
  if (job_id.empty()) return fail(ErrorKind::data, "job id is empty");
  ServiceCall call;
  call.segments = {"lab_report", "v1", "parser", "job", std::string(job_id)};
  auto reply = call_service(access, call);
  if (!reply) return fail(reply);
  if (reply->body.size() > max_document_bytes) {
    return fail(reply->request + ": " + over_document_limit(reply->body.size(), max_document_bytes));
  }
  auto job = read_job(*reply);
  if (!job) return job;
  // Another job's answer would be shown as this one's (serve's follow-up refuses it too).
  if (auto problem = other_parsing_job_problem(job->id, job_id); !problem.empty()) {
    return fail(reply->request + ": unexpected answer: id: " + problem);
  }
  return job;
}

}  // namespace hh::fetcher
