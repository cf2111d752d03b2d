#pragma once
// The console's files (console/assets/), compiled into the binary by a build step
// (console/embed_assets.cmake): the console works on a machine with no internet and
// nothing installed beside the binary. Immutable; safe from any thread.
#include <span>
#include <string_view>

namespace hh::console {

struct EmbeddedAsset {
  std::string_view name;          // file name under console/assets/, e.g. "app.js"
  std::string_view content_type;  // from the extension
  std::string_view bytes;         // the file exactly
  std::string_view etag;          // strong, quoted: "\"<32 hex digits of its SHA-256>\""
};

std::span<const EmbeddedAsset> embedded_assets();

// The asset named `name`, or null.
const EmbeddedAsset* find_asset(std::string_view name);

}  // namespace hh::console
