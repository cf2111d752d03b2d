#include "common/glob_problem.h"

namespace hh {

std::string glob_problem(std::string_view glob) {
  for (size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] != '[') continue;
    size_t at = i + 1;
    if (at < glob.size() && glob[at] == '^') ++at;
    if (at < glob.size() && glob[at] == ']') ++at;  // `]` first is itself
    const size_t close = glob.find(']', at);
    if (close == std::string_view::npos) {
      return "the set opened by '[' at character " + std::to_string(i + 1) +
             " is never closed, so the pattern matches nothing (a literal '[' is written [[])";
    }
    i = close;
  }
  return {};
}

}  // namespace hh
