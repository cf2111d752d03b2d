#include "common/glob_problem.h"

namespace hh {

std::string glob_with_shell_negation(std::string_view glob) {
  std::string out(glob);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != '[') continue;
    size_t at = i + 1;
    if (at < out.size() && out[at] == '!') out[at] = '^';
    if (at < out.size() && out[at] == '^') ++at;
    if (at < out.size() && out[at] == ']') ++at;  // `]` first is itself
    const size_t close = out.find(']', at);
    if (close == std::string::npos) break;  // glob_problem() names it
    i = close;  // a `[` inside a set is itself
  }
  return out;
}

std::string glob_problem(std::string_view glob) {
  for (size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] != '[') continue;
    size_t at = i + 1;
    if (at < glob.size() && (glob[at] == '^' || glob[at] == '!')) ++at;  // `[!` is read as `[^`
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
