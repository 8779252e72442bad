// SHA-256 (FIPS 180-4) and base64 (RFC 4648): what a Content-Security-Policy
// needs to allow an inline <script> or <style> by its hash ('sha256-BASE64').
//
//   std::string source = "'sha256-" + Base64(Sha256(script_text)) + "'";
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace opscope {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view data);
// Standard alphabet with '=' padding, as CSP hash sources are written.
std::string Base64(std::span<const uint8_t> bytes);
std::string HexDigest(const Sha256Digest& digest);

}  // namespace opscope
