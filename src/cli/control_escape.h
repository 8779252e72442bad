// File: cli/control_escape.h
// What the tools print to a terminal carries names from files nobody here
// wrote: a model's node names, an .npz's member names, a kernel's message. A
// control character among them (an escape sequence that retitles the
// terminal, moves the cursor or clears the screen, a backspace, a bell) must
// not reach the terminal as one: it is written as \xNN. Newline and tab pass.
// Where the stream takes colour (UseColor), the SGR (colour) and EL (erase
// line, after a \r) sequences the tools themselves write pass too.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>

namespace opscope::cli {

class ControlEscapingBuf : public std::streambuf {
 public:
  ControlEscapingBuf(std::streambuf* to, bool allow_color) : to_(to), allow_color_(allow_color) {}
  ~ControlEscapingBuf() override { FlushPending(); }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void Put(char c);
  void PutEscaped(unsigned char c);
  void FlushPending();  // a sequence that did not complete: escaped
  std::streambuf* to_;
  bool allow_color_;
  std::string pending_;  // a \r or an ESC sequence still being read
};

// For the life of the object, std::cout and std::cerr escape control
// characters (GuardedMain holds one).
class ScopedControlEscaping {
 public:
  ScopedControlEscaping();
  ~ScopedControlEscaping();
  ScopedControlEscaping(const ScopedControlEscaping&) = delete;
  ScopedControlEscaping& operator=(const ScopedControlEscaping&) = delete;

 private:
  ControlEscapingBuf out_, err_;
  std::streambuf* old_out_;
  std::streambuf* old_err_;
};

// The same rule for one string (no colour allowed): for what goes to stderr
// by stdio, as the last-resort terminate handler writes.
std::string EscapeControl(const std::string& text);

}  // namespace opscope::cli
