#pragma once
// The request/response types every endpoint uses, and the few ways we build responses.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <string>
#include <string_view>

#include "common/asio_token.h"

namespace hh::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;
using Status = bhttp::status;

// Resumes the calling coroutine after `delay` (at once when it is not positive).
net::awaitable<void> wait_for(std::chrono::milliseconds delay);

// {"error": message} with the given status.
Response error_response(Status status, std::string_view message);
// A JSON body that is already serialized.
Response json_response(Status status, std::string body);
Response text_response(Status status, std::string body, std::string_view content_type);

// The answer to a HEAD: the GET's head, its Content-Length kept, no body. A 304 or 204
// carries no Content-Length of its own (a 304's would have to be the 200's, RFC 9110 §8.6).
// A response already without its body (Content-Length kept) is returned as it is.
Response without_body(Response response);

}  // namespace hh::http
