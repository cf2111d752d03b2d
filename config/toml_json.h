#pragma once
// A TOML value, as settings_in_effect() writes it ("16", "\"full\"", "[\"secret\"]",
// "{ us = \"https://…\" }"), as JSON text: what `check-config` prints, so that a script
// reads lists and tables as JSON, not as TOML inside a string. Read by toml++, the same
// parser the configuration is read with.
#include <string>
#include <string_view>

namespace hh::config {

// `toml` a TOML value; text that is not one comes back as a JSON string of itself.
std::string toml_value_as_json(std::string_view toml);

}  // namespace hh::config
