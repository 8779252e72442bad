// File: report/page_policy.h
// What a page of ours may run and load, and the inlining that makes
// report.html one self-contained file. The Content-Security-Policy names
// each inlined script and stylesheet by the hash of its text, so an element
// injected into a page (through a node name, a file) never runs or applies.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"

namespace opscope {

struct InlinedAsset {
  std::string element;      // <script>...</script> or <style>...</style>
  std::string hash_source;  // 'sha256-...', for the policy
};

// One file of web/ linked by index.html, as the element that inlines it
// (`element` is "script" or "style"). An error when it is not compiled in or
// its text could end the element ("</script" in app code).
StatusOr<InlinedAsset> InlineAsset(std::string_view name, std::string_view element);

// The policy of a page whose inlined scripts and styles have these hash
// sources; `served` adds the server the page came from ('self').
std::string PagePolicy(const std::vector<std::string>& scripts, const std::vector<std::string>& styles, bool served);

// The policy every answer of `inspector-cli serve` carries: every asset's
// hash as InlineAsset inlines it (a diagnosis folder's page comes built, its
// scripts inline), and 'self'.
const std::string& ServedPolicy();

}  // namespace opscope
