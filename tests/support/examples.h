#pragma once
// The service's documented payloads (schemas/examples/), read as written, for tests.
#include <string>

namespace hh::test {

// The file `name` of schemas/examples/; throws std::runtime_error when it cannot be read.
std::string example_file(const std::string& name);

}  // namespace hh::test
