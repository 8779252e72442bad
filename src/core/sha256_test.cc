#include "core/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace opscope {
namespace {

std::span<const uint8_t> Bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// FIPS 180-4's examples (csrc.nist.gov, SHA256.pdf and the SHAVS long message).
TEST(Sha256, MatchesThePublishedExamples) {
  EXPECT_EQ(HexDigest(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HexDigest(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexDigest(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(HexDigest(Sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Where the padding needs a second block (55 bytes fit one, 56 do not) and a
// whole block with its padding alone after it; digests from Python's hashlib.
TEST(Sha256, PadsAtTheBlockEdges) {
  EXPECT_EQ(HexDigest(Sha256(std::string(55, 'a'))), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(HexDigest(Sha256(std::string(56, 'a'))), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(HexDigest(Sha256(std::string(64, 'a'))), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(HexDigest(Sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlm"
                             "nopqrsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

// RFC 4648 section 10, and a digest as a CSP hash source writes it.
TEST(Sha256, Base64MatchesTheRfcVectors) {
  EXPECT_EQ(Base64(Bytes("")), "");
  EXPECT_EQ(Base64(Bytes("f")), "Zg==");
  EXPECT_EQ(Base64(Bytes("fo")), "Zm8=");
  EXPECT_EQ(Base64(Bytes("foo")), "Zm9v");
  EXPECT_EQ(Base64(Bytes("foob")), "Zm9vYg==");
  EXPECT_EQ(Base64(Bytes("fooba")), "Zm9vYmE=");
  EXPECT_EQ(Base64(Bytes("foobar")), "Zm9vYmFy");
  EXPECT_EQ(Base64(Sha256("abc")), "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
}

}  // namespace
}  // namespace opscope
