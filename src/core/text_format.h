// File: core/text_format.h
// How every report of opscope writes numbers, coordinates, addresses and
// command lines, so ops-debug's text, its report.json and inspector-cli's
// summaries read the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opscope {

// Quotes a word for a POSIX shell when it needs it (for repro lines).
std::string ShellQuote(const std::string& word);
// 1234567 -> "1,234,567"
std::string WithThousands(int64_t n);
// 0x7f3a12345678 -> "0x7f3a…5678": stable-looking, still tells buffers apart.
std::string MaskAddress(const void* p);
// op_id in hex, shortened the same way.
std::string ShortHex(uint64_t v);
// A number as reports print it: 7 significant digits ("%.7g").
std::string ShortNum(double v);
// Coordinates as reports print them: "[3,17,0,55]".
std::string CoordsText(const std::vector<int64_t>& coords);
// Collapses newlines so an error stays one line.
std::string OneLine(std::string text);

// Text made safe inside XML or HTML, in element content and in quoted
// attributes alike: & < > " ' become entities (the SVG charts, sweep.html).
std::string EscapeXml(const std::string& text);

// A duration in microseconds as "812.4 us" or "1.292 ms"; "n/a" when negative.
std::string FormatMicros(double us);

// A name at most `width` characters wide for a table column: a longer one
// keeps its start and its end, which tell names of one model apart
// ("encoder/layer.11/attention/Softmax" -> "encoder/la...ntion/Softmax"),
// and loses its middle. Counted in bytes, cut only between UTF-8 characters.
std::string CutMiddle(const std::string& name, size_t width);

}  // namespace opscope
