#pragma once
// The lab report parsing API (service interface, "Other endpoints named by announced
// changes"; beta, enabled on request): POST /lab_report/v1/parser/job uploads a PDF, JPEG
// or PNG report of up to 10 MB and creates a parsing job; GET
// /lab_report/v1/parser/job/{job_id} returns its status and results.
//
// The interface does not show the upload's request shape. healthhook sends
// multipart/form-data with a `file` part (the file's name, its content type from its
// magic bytes), `needs_human_review` ("true" or "false") and, when given, `user_id`
// (docs/decisions/035-lab-report-upload-shape.md).
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "fetcher/calls/service_request.h"

namespace hh::fetcher {

// The interface's limit: 10 MB, taken as MiB.
inline constexpr size_t kMaxLabReportBytes = 10 * 1024 * 1024;

struct LabReportFile {
  std::string name;          // the file name sent (no folders; quotes and controls replaced)
  std::string content_type;  // application/pdf, image/jpeg or image/png
  std::string bytes;
};

// Reads `path` and checks it: at most kMaxLabReportBytes, and a PDF ("%PDF-"), JPEG
// (FF D8 FF) or PNG (89 50 4E 47 0D 0A 1A 0A) by its first bytes, whatever its name.
// Failures are ErrorKind::data (the file is wrong) or ErrorKind::io (cannot read it).
Result<LabReportFile> read_lab_report_file(const std::string& path);

// The multipart/form-data body of an upload with `boundary` (not in the file's bytes).
std::string lab_report_form(const LabReportFile& file, bool needs_human_review,
                            std::optional<std::string_view> user_id, std::string_view boundary);

struct ParsingJobAnswer {
  std::string id;      // the parsing job's id
  std::string status;  // as sent ("" when absent)
  std::string body;    // the whole answer, a JSON object
};

// POST /lab_report/v1/parser/job. The answer must be a JSON object with the job's `id`
// (the ParsingJob of the lab_report.parsing_job.* events).
Result<ParsingJobAnswer> upload_lab_report(const ServiceAccess& access, const LabReportFile& file,
                                           bool needs_human_review, std::optional<std::string_view> user_id);

// GET /lab_report/v1/parser/job/{job_id}. An answer whose `id` is another job's is a
// failure (common/parsing_job_answer.h), and so is one over `max_document_bytes` (the
// parser's limit, events::ParseLimits), which serve's follow-up refuses too: read, parsed
// and printed whole, it cost a command seven times its size.
Result<ParsingJobAnswer> get_parsing_job(const ServiceAccess& access, std::string_view job_id,
                                         size_t max_document_bytes);

}  // namespace hh::fetcher
