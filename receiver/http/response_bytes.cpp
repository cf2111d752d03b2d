#include "receiver/http/response_bytes.h"

namespace hh::http {

bool writes_as_bytes(const Response& response) {
  return !response.chunked() && response.body().size() <= kLargestBodyWrittenAsBytes;
}

void write_bytes_of(const Response& response, std::string& out) {
  out.clear();
  const unsigned version = response.version();
  out += "HTTP/";
  out.push_back(static_cast<char>('0' + version / 10));
  out.push_back('.');
  out.push_back(static_cast<char>('0' + version % 10));
  out.push_back(' ');
  const unsigned code = response.result_int();
  out.push_back(static_cast<char>('0' + code / 100));
  out.push_back(static_cast<char>('0' + code / 10 % 10));
  out.push_back(static_cast<char>('0' + code % 10));
  out.push_back(' ');
  out += response.reason();
  out += "\r\n";
  for (const auto& field : response) {
    out += field.name_string();
    out += ": ";
    out += field.value();
    out += "\r\n";
  }
  out += "\r\n";
  out += response.body();
}

}  // namespace hh::http
