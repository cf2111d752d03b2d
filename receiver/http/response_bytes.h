#pragma once
// A response's head as the bytes that go on the wire, written into a buffer the connection
// keeps: the start line, the fields in their order, the blank line; the bytes Beast's
// serializer writes for a response of fixed length. The head and the body (never copied)
// then leave in one gathering send through one plain write operation: Beast's serializer
// runs a stack of composed operations per response, which cost the io thread about a sixth
// of its time per 1 KiB delivery (docs/decisions/066-responses-written-as-one-buffer.md).
#include <string>

#include "receiver/http/http_types.h"

namespace hh::http {

// Whether the head and the body can be sent as they are (Beast's serializer writes the
// others: a chunked body is framed while it is written).
bool writes_as_bytes(const Response& response);

// Replaces `out` with the response's head; `out` keeps its capacity between answers. The
// body follows it on the wire as response.body() holds it.
void write_head_of(const Response& response, std::string& out);

}  // namespace hh::http
