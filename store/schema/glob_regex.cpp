#include "store/schema/glob_regex.h"

namespace hh::store::schema {
namespace {

// One character of the glob (a whole UTF-8 sequence) at `i`, as a regex literal: ASCII
// punctuation escaped (in a bracket expression too: `\` stays special there in AREs),
// letters, digits and other characters as they are.
size_t append_literal(std::string_view glob, size_t i, std::string& out) {
  const auto c = static_cast<unsigned char>(glob[i]);
  if (c < 0x80) {
    if ((c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z')) out.push_back('\\');
    out.push_back(static_cast<char>(c));
    return 1;
  }
  size_t n = 1;  // a UTF-8 sequence: the lead byte and its continuation bytes
  while (i + n < glob.size() && (static_cast<unsigned char>(glob[i + n]) & 0xC0) == 0x80) ++n;
  out.append(glob.substr(i, n));
  return n;
}

}  // namespace

std::string glob_to_regex(std::string_view glob) {
  std::string out = "^";
  size_t i = 0;
  while (i < glob.size()) {
    const char c = glob[i];
    if (c == '*') {
      out += ".*";
      ++i;
    } else if (c == '?') {
      out += '.';
      ++i;
    } else if (c != '[') {
      i += append_literal(glob, i, out);
    } else {
      std::string set = "[";
      std::string_view last_member;  // the glob's spelling of the set's last single character
      size_t j = i + 1;
      if (j < glob.size() && glob[j] == '^') {
        set += '^';
        ++j;
      }
      bool prior = false;  // a character before: a '-' after it makes a range
      bool members = false;
      if (j < glob.size() && glob[j] == ']') {
        set += "\\]";
        last_member = glob.substr(j, 1);
        ++j;
        prior = members = true;
      }
      while (j < glob.size() && glob[j] != ']') {
        if (glob[j] == '-' && prior && j + 1 < glob.size() && glob[j + 1] != ']') {
          // A range: its first character is already in the set. A reversed one holds nothing
          // more in SQLite, and is an error in a regular expression: left out.
          const size_t first = set.size();
          set += '-';
          const size_t end_at = j + 1;
          j = end_at + append_literal(glob, end_at, set);
          if (glob.substr(end_at, j - end_at) < last_member) set.resize(first);
          prior = false;
        } else {
          const size_t start = j;
          j += append_literal(glob, j, set);
          last_member = glob.substr(start, j - start);
          prior = members = true;
        }
      }
      if (j >= glob.size()) return "a^";  // a set left open: matches nothing
      if (!members) return "a^";         // cannot happen: a set always has a first member
      out += set + ']';
      i = j + 1;
    }
  }
  return out + "$";
}

}  // namespace hh::store::schema
