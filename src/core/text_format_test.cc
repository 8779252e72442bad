// core/text_format.h: ShellQuote, the one quoting of every printed command
// line. Each hostile word is pasted into a real sh and must come back as the
// one argument it was, with nothing run.
#include "core/text_format.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace opscope {
namespace {

// What `sh -c 'printf "%s|" WORD'` prints: the words the shell made of it.
std::string ThroughSh(const std::string& quoted) {
  const std::string script = "printf '%s|' " + quoted;
  std::FILE* p = ::popen(("sh -c " + ShellQuote(script)).c_str(), "r");
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST(ShellQuote, HostileWordsComeBackAsOneWordAndRunNothing) {
  const std::filesystem::path marker = std::filesystem::temp_directory_path() / "shell_quote_test_PWNED";
  std::filesystem::remove(marker);
  const std::string touch = "touch " + marker.string();
  const std::string words[] = {
      "in`" + touch + "`.npy", "in$(" + touch + ").npy", "a\t" + touch, "a\n" + touch, "a;" + touch,
      "a\\", "it's", "'", "\\'", "~root", "*", "a b", "--x=$HOME", "!", "#c", "a|b&c", "{a,b}", "[ab]", "",
      "\xe2\x80\xa8", "plain-name_1.npy"};
  for (const std::string& w : words) {
    const std::string q = ShellQuote(w);
    EXPECT_EQ(ThroughSh(q), w + "|") << "word: " << w << "  quoted: " << q;
  }
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a quoted word ran a command";
  EXPECT_EQ(ShellQuote("plain-name_1.npy"), "plain-name_1.npy") << "a plain word stays readable";
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

TEST(Hex, FullWidthLowercaseWithPrefix) {
  EXPECT_EQ(Hex(0), "0x0");
  EXPECT_EQ(Hex(0x7f3a2c001000), "0x7f3a2c001000");
  EXPECT_EQ(Hex(UINT64_MAX), "0xffffffffffffffff");
}

TEST(CountOccurrences, CountsOverlappingMatches) {
  EXPECT_EQ(CountOccurrences("aaaa", "aa"), 3u);
  EXPECT_EQ(CountOccurrences("<g><g class=x>", "<g"), 2u);
  EXPECT_EQ(CountOccurrences("abc", "d"), 0u);
  EXPECT_EQ(CountOccurrences("", "a"), 0u);
}

}  // namespace
}  // namespace opscope
