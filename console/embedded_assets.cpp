#include "console/embedded_assets.h"

namespace hh::console {

const EmbeddedAsset* find_asset(std::string_view name) {
  for (const auto& asset : embedded_assets()) {
    if (asset.name == name) return &asset;
  }
  return nullptr;
}

}  // namespace hh::console
