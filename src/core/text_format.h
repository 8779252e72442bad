// File: core/text_format.h
// How every report of opscope writes numbers, coordinates, addresses and
// command lines, so ops-debug's text, its report.json and inspector-cli's
// summaries read the same.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope {

// Quotes a word for a POSIX shell when it needs it: the one quoting of every
// command line the tools print (text, JSON, HTML), so a line pasted back runs
// the tool and nothing else, whatever file names went into it. An allow-list:
// a word of letters, digits and _-./=,:+@% stays as it is; anything else goes
// in single quotes, inside which sh takes every byte literally (backticks, $,
// backslashes, tabs, newlines), with ' itself written '\''.
std::string ShellQuote(const std::string& word);
// 1234567 -> "1,234,567"
std::string WithThousands(int64_t n);
// 0x7f3a12345678 -> "0x7f3a…5678": stable-looking, still tells buffers apart.
std::string MaskAddress(const void* p);
// An address or id as every report prints it: "0x7f3a2c001000".
std::string Hex(uint64_t v);
// A 64-bit key or fingerprint in full, as reports keep them: 16 hex digits,
// zero-padded ("00a1b2c3d4e5f607").
std::string Hex16(uint64_t v);
// op_id in hex, shortened the same way.
std::string ShortHex(uint64_t v);
// A number as reports print it: 7 significant digits ("%.7g").
std::string ShortNum(double v);
// Coordinates as reports print them: "[3,17,0,55]".
std::string CoordsText(const std::vector<int64_t>& coords);
// How many times `part` occurs in `text`, overlapping ones included.
size_t CountOccurrences(std::string_view text, std::string_view part);
// The items joined by `sep` ("a, b, c"); "" for none.
std::string JoinStrings(const std::vector<std::string>& items, std::string_view sep);
// The same, each item written by `text`:
//   JoinMapped(op.tunables, ", ", [](const TunableDef& t) { return t.name; })
template <typename Range, typename ToText>
std::string JoinMapped(const Range& items, std::string_view sep, ToText text) {
  std::string s;
  bool first = true;
  for (const auto& item : items) {
    if (!first) s += sep;
    first = false;
    s += text(item);
  }
  return s;
}
// ASCII letters in lower case, every other byte as it is (names, flags, headers).
std::string AsciiLower(std::string_view text);
// Collapses newlines so an error stays one line.
std::string OneLine(std::string text);

// Text made safe inside XML or HTML, in element content and in quoted
// attributes alike: & < > " ' become entities (the SVG charts, sweep.html);
// invalid UTF-8 and the control characters XML cannot hold become U+FFFD.
std::string EscapeXml(const std::string& text);

// Names come from files nobody here wrote, and every file the tools write is
// valid UTF-8 (or the next reader refuses it). Each byte that does not start
// a well-formed sequence (RFC 3629: no overlong forms, no surrogates, nothing
// past U+10FFFF) becomes U+FFFD, as the JSON writer's replace mode does.
bool IsValidUtf8(std::string_view text);
std::string ValidUtf8(std::string_view text);
// The length of the well-formed sequence at text[at], or 0 when it is none.
size_t Utf8SequenceLength(std::string_view text, size_t at);

// A duration in microseconds as "812.4 us" or "1.292 ms"; "n/a" when negative.
std::string FormatMicros(double us);
// "512 B", "1.5 KiB", "16.00 MiB", "2.00 GiB".
std::string FormatBytes(double bytes);

// A name at most `width` characters wide for a table column: a longer one
// keeps its start and its end, which tell names of one model apart
// ("encoder/layer.11/attention/Softmax" -> "encoder/la...ntion/Softmax"),
// and loses its middle. Counted in bytes, cut only between UTF-8 characters.
std::string CutMiddle(const std::string& name, size_t width);

}  // namespace opscope
