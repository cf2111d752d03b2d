#include "config/toml_json.h"

#include <toml++/toml.h>

#include <charconv>
#include <sstream>

#include "common/json_writer.h"

namespace hh::config {
namespace {

void append_node(std::string& out, const toml::node& node) {
  if (const auto* text = node.as_string()) {
    json::append_string(out, text->get());
  } else if (const auto* integer = node.as_integer()) {
    out += std::to_string(integer->get());
  } else if (const auto* number = node.as_floating_point()) {
    char buffer[32];
    const auto written = std::to_chars(buffer, buffer + sizeof buffer, number->get());
    out.append(buffer, written.ptr);
  } else if (const auto* flag = node.as_boolean()) {
    out += flag->get() ? "true" : "false";
  } else if (const auto* array = node.as_array()) {
    out.push_back('[');
    for (size_t i = 0; i < array->size(); ++i) {
      if (i > 0) out.push_back(',');
      append_node(out, *array->get(i));
    }
    out.push_back(']');
  } else if (const auto* table = node.as_table()) {
    out.push_back('{');
    bool first = true;
    for (const auto& [key, value] : *table) {
      if (!first) out.push_back(',');
      first = false;
      json::append_string(out, key.str());
      out.push_back(':');
      append_node(out, value);
    }
    out.push_back('}');
  } else {  // dates and times: as TOML writes them
    std::ostringstream text;
    node.visit([&](const auto& value) { text << value; });
    json::append_string(out, text.str());
  }
}

}  // namespace

std::string toml_value_as_json(std::string_view toml) {
  std::string out;
  try {
    const toml::table parsed = toml::parse("v = " + std::string(toml));
    if (const toml::node* value = parsed.get("v")) {
      append_node(out, *value);
      return out;
    }
  } catch (const toml::parse_error&) {
  }
  json::append_string(out, toml);
  return out;
}

}  // namespace hh::config
