#include "common/parsing_job_answer.h"

#include "common/json_writer.h"

namespace hh {

std::string other_parsing_job_problem(std::string_view answered_id, std::string_view fetched_id) {
  if (answered_id == fetched_id) return {};
  std::string problem = "not the job fetched ";
  json::append_quoted_excerpt(problem, fetched_id);
  return problem;
}

}  // namespace hh
