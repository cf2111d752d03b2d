#pragma once
// UUIDs as text: the service names users, teams and organizations by them.
#include <string>
#include <string_view>

namespace hh {

// The canonical text form of a UUID (hexadecimal digits in dash-separated groups, either
// case), as the service writes user ids.
bool is_uuid(std::string_view text);

// Two ids name the same thing: equal but for their letters' case (the service may answer
// its canonical form of an id it was sent in another).
bool same_uuid(std::string_view a, std::string_view b);

// A key under which ids that same_uuid() takes for one are one: the id in lower case.
std::string uuid_key(std::string_view id);

}  // namespace hh
