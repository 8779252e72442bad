// File: report/web_assets.h
// The web UI's files (web/: HTML, CSS and plain JavaScript) compiled into the
// library by embed_web.cmake, so the pages the tools write and serve need
// nothing installed beside them.
#pragma once

#include <string_view>
#include <vector>

namespace opscope {

// One file of web/, as compiled in.
struct WebAsset {
  std::string_view name;          // "app.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view data;
};

// Defined in the generated web_assets.cc.
const std::vector<WebAsset>& EmbeddedWebAssets();
// nullptr when web/ had no file of that name.
const WebAsset* FindWebAsset(std::string_view name);

}  // namespace opscope
