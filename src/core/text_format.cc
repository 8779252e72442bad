#include "core/text_format.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <string_view>

namespace opscope {

std::string ShellQuote(const std::string& word) {
  if (word.empty()) return "''";
  bool plain = true;
  for (char c : word) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-./=,:+@%").find(c) != std::string_view::npos)) {
      plain = false;
    }
  }
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string WithThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

size_t CountOccurrences(std::string_view text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::string JoinStrings(const std::vector<std::string>& items, std::string_view sep) {
  return JoinMapped(items, sep, [](const std::string& s) -> const std::string& { return s; });
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string Hex16(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string ShortHex(uint64_t v) {
  const std::string s = Hex16(v);
  return s.substr(0, 4) + "\u2026" + s.substr(s.size() - 4);
}

std::string MaskAddress(const void* p) {
  if (p == nullptr) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
  std::string s = buf;
  if (s.size() <= 8) return "0x" + s;
  return "0x" + s.substr(0, 4) + "\u2026" + s.substr(s.size() - 4);
}

std::string ShortNum(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

std::string CoordsText(const std::vector<int64_t>& coords) {
  std::string s = "[";
  for (size_t i = 0; i < coords.size(); ++i) s += (i ? "," : "") + std::to_string(coords[i]);
  return s + "]";
}

std::string OneLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

size_t Utf8SequenceLength(std::string_view s, size_t at) {
  const auto byte = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  const unsigned b0 = byte(at);
  const auto cont = [&](size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) { return byte(i) >= lo && byte(i) <= hi; };
  if (b0 < 0x80) return at < s.size() ? 1 : 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(at + 1) ? 2 : 0;
  if (b0 == 0xE0) return cont(at + 1, 0xA0) && cont(at + 2) ? 3 : 0;           // no overlongs
  if (b0 == 0xED) return cont(at + 1, 0x80, 0x9F) && cont(at + 2) ? 3 : 0;     // no surrogates
  if (b0 >= 0xE1 && b0 <= 0xEF) return cont(at + 1) && cont(at + 2) ? 3 : 0;
  if (b0 == 0xF0) return cont(at + 1, 0x90) && cont(at + 2) && cont(at + 3) ? 4 : 0;
  if (b0 >= 0xF1 && b0 <= 0xF3) return cont(at + 1) && cont(at + 2) && cont(at + 3) ? 4 : 0;
  if (b0 == 0xF4) return cont(at + 1, 0x80, 0x8F) && cont(at + 2) && cont(at + 3) ? 4 : 0;  // <= U+10FFFF
  return 0;
}

bool IsValidUtf8(std::string_view s) {
  for (size_t at = 0; at < s.size();) {
    const size_t n = Utf8SequenceLength(s, at);
    if (n == 0) return false;
    at += n;
  }
  return true;
}

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t at = 0; at < s.size();) {
    const size_t n = Utf8SequenceLength(s, at);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for the one byte; the next is looked at afresh
      ++at;
    } else {
      out.append(s, at, n);
      at += n;
    }
  }
  return out;
}

std::string EscapeXml(const std::string& text) {
  const std::string s = IsValidUtf8(text) ? text : ValidUtf8(text);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t':
      case '\n':
      case '\r': out += c; break;
      default:
        // XML 1.0 cannot hold the other C0 controls, not even as references.
        if (static_cast<unsigned char>(c) < 0x20) out += "\xEF\xBF\xBD";
        else out += c;
    }
  }
  return out;
}

std::string FormatMicros(double us) {
  char buf[64];
  if (us < 0) return "n/a";
  if (us < 1000) std::snprintf(buf, sizeof buf, "%.1f us", us);
  else std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000);
  return buf;
}

std::string FormatBytes(double b) {
  char s[32];
  if (b >= 1 << 30) std::snprintf(s, sizeof s, "%.2f GiB", b / (1 << 30));
  else if (b >= 1 << 20) std::snprintf(s, sizeof s, "%.2f MiB", b / (1 << 20));
  else if (b >= 1 << 10) std::snprintf(s, sizeof s, "%.1f KiB", b / (1 << 10));
  else std::snprintf(s, sizeof s, "%.0f B", b);
  return s;
}

std::string CutMiddle(const std::string& name, size_t width) {
  if (name.size() <= width) return name;
  static constexpr char kCut[] = "...";
  constexpr size_t kCutSize = sizeof(kCut) - 1;
  if (width <= kCutSize) return name.substr(0, width);
  const auto continuation = [&](size_t i) { return (static_cast<unsigned char>(name[i]) & 0xC0) == 0x80; };
  size_t head = (width - kCutSize + 1) / 2, tail = name.size() - (width - kCutSize - head);
  while (head > 0 && continuation(head)) --head;         // not inside a character
  while (tail < name.size() && continuation(tail)) ++tail;
  return name.substr(0, head) + kCut + name.substr(tail);
}

}  // namespace opscope
