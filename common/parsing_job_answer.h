#pragma once
// GET /lab_report/v1/parser/job/{job_id} answers one ParsingJob, whose `id` must be the job
// asked for: an answer about another job (a mix-up at the service or in a cache before it)
// would show or store that job's results as this one's. serve's follow-up
// (events/delivery_parser.cpp: the fetched row is invalid) and `lab-report show`
// (fetcher/calls/lab_reports.h: exit 1) refuse it alike.
#include <string>
#include <string_view>

namespace hh {

// Empty when `answered_id` is `fetched_id`; else what is wrong with the answer's `id`:
// `not the job fetched "<fetched_id>"` (quoted as JSON, cut after 64 bytes).
std::string other_parsing_job_problem(std::string_view answered_id, std::string_view fetched_id);

}  // namespace hh
