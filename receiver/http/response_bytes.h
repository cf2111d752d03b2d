#pragma once
// A response as the bytes that go on the wire, written into a buffer the connection keeps:
// the start line, the fields in their order, the blank line, the body; the bytes Beast's
// serializer writes for a response of fixed length. Each answer then leaves in one send
// through one plain write operation: Beast's serializer runs a stack of composed operations
// per response, which cost the io thread about a sixth of its time per 1 KiB delivery
// (docs/decisions/066-responses-written-as-one-buffer.md).
#include <string>

#include "receiver/http/http_types.h"

namespace hh::http {

// Whether write_bytes_of() can write this response (Beast's serializer writes the others:
// a chunked body is framed while it is written).
bool writes_as_bytes(const Response& response);

// Replaces `out` with the response's bytes; `out` keeps its capacity between answers.
void write_bytes_of(const Response& response, std::string& out);

}  // namespace hh::http
