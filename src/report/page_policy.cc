#include "report/page_policy.h"

#include "core/sha256.h"
#include "core/text_format.h"
#include "report/web_assets.h"

namespace opscope {

namespace {

// The Content-Security-Policy source that lets exactly this inline element's
// text run (or apply): nothing injected into a page matches it.
std::string HashSource(std::string_view text) { return "'sha256-" + Base64(Sha256(text)) + "'"; }

// The text of an asset as it sits between its inlined element's tags.
std::string InlinedText(const WebAsset& asset) { return "\n" + std::string(asset.data); }

}  // namespace

// Inlines one linked asset. The asset must not be able to end the element it
// is put in (a literal "</script" in app code would cut the page short).
StatusOr<InlinedAsset> InlineAsset(std::string_view name, std::string_view element) {
  const WebAsset* asset = FindWebAsset(name);
  if (!asset) return InternalError("web/index.html links '" + std::string(name) + "', which is not compiled in");
  if (AsciiLower(asset->data).find("</" + std::string(element)) != std::string::npos) {
    return InternalError("web/" + std::string(name) + " contains '</" + std::string(element) +
                         "', which would end the inlined element");
  }
  const std::string text = InlinedText(*asset);
  return InlinedAsset{.element = "<" + std::string(element) + ">" + text + "</" + std::string(element) + ">",
                      .hash_source = HashSource(text)};
}

// What every page may load. Scripts and styles: the UI's own, inline ones by
// their hashes, so neither an injected handler (no 'unsafe-inline') nor an
// injected <script> or <style> (a stylesheet could @import from anywhere or
// hide the page) applies. Images: data: URLs only (the favicon). Nothing from
// another host. `served` adds the server the page was fetched from: its
// scripts, stylesheet and the run files the page fetches.
std::string PagePolicy(const std::vector<std::string>& scripts, const std::vector<std::string>& styles, bool served) {
  const auto join = [](std::string head, const std::vector<std::string>& sources) {
    for (const std::string& s : sources) head += " " + s;
    return head;
  };
  const std::string self = served ? " 'self'" : "";
  std::string policy = "default-src 'none'; " + join("script-src" + self, scripts) + "; " +
                       join("style-src" + self, styles) + "; img-src data:; base-uri 'none'; form-action 'none'";
  // frame-ancestors is ignored in a <meta> policy: only the server can say it.
  if (served) policy += "; connect-src 'self'; frame-ancestors 'none'";
  return policy;
}

const std::string& ServedPolicy() {
  static const std::string policy = [] {
    std::vector<std::string> scripts, styles;
    for (const WebAsset& a : EmbeddedWebAssets()) {
      if (a.name.ends_with(".js")) scripts.push_back(HashSource(InlinedText(a)));
      if (a.name.ends_with(".css")) styles.push_back(HashSource(InlinedText(a)));
    }
    return PagePolicy(scripts, styles, /*served=*/true);
  }();
  return policy;
}

}  // namespace opscope
