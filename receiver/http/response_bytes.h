#pragma once
// A small response as the bytes that go on the wire, written into a buffer the connection
// keeps: the start line, the fields in their order, the blank line, the body; the bytes
// Beast's serializer writes for a response of fixed length. The answer then leaves in one
// send through one plain write of one buffer: Beast's serializer runs a stack of composed
// operations per response, which cost the io thread about a sixth of its time per 1 KiB
// delivery (docs/decisions/066-responses-written-as-one-buffer.md).
//
// Only small answers (every ack and refusal): a large one (a read-API page, a console
// file) goes through Beast's serializer, whose cost is nothing beside its bytes, so that
// the kept buffer stays small on every connection, idle ones included, and a body is never
// copied whole. One buffer, never a head and a body side by side: over TLS, Beast's
// ssl_stream (flat_stream) can write an empty first buffer for a two-buffer sequence
// whose second part is above 16 KiB, which Asio's write loop takes for the end.
#include <cstddef>
#include <string>

#include "receiver/http/http_types.h"

namespace hh::http {

// The largest body written by write_bytes_of(); the kept buffer holds a few hundred bytes
// of head more.
inline constexpr size_t kLargestBodyWrittenAsBytes = 2048;

// Whether write_bytes_of() writes this response: a body of fixed length (a chunked body is
// framed while it is written) of at most kLargestBodyWrittenAsBytes.
bool writes_as_bytes(const Response& response);

// Replaces `out` with the response's bytes; `out` keeps its capacity between answers.
void write_bytes_of(const Response& response, std::string& out);

}  // namespace hh::http
