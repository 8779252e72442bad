#include "report/web_assets.h"

namespace opscope {

const WebAsset* FindWebAsset(std::string_view name) {
  for (const WebAsset& a : EmbeddedWebAssets()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace opscope
