// Fuzzes the configuration file reader: any TOML text gives settings or a one-line error
// naming the source, never a crash.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/load_settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hh::config::Settings settings;
  auto applied = hh::config::apply_toml_text(settings, std::string_view(reinterpret_cast<const char*>(data), size),
                                             "fuzz.toml");
  if (!applied) {
    if (applied.error().rfind("fuzz.toml", 0) != 0) std::abort();  // errors name the file
    return 0;
  }
  (void)hh::config::validate(settings);
  return 0;
}
