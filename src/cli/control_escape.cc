#include "cli/control_escape.h"

#include <cctype>
#include <cstdio>
#include <iostream>

#include "cli/terminal.h"

namespace opscope::cli {
namespace {

bool IsControl(unsigned char c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }

void AppendEscaped(std::string& out, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

}  // namespace

void ControlEscapingBuf::PutEscaped(unsigned char c) {
  std::string s;
  AppendEscaped(s, c);
  to_->sputn(s.data(), static_cast<std::streamsize>(s.size()));
}

void ControlEscapingBuf::FlushPending() {
  for (char p : pending_) {
    if (IsControl(static_cast<unsigned char>(p))) PutEscaped(static_cast<unsigned char>(p));
    else to_->sputc(p);
  }
  pending_.clear();
}

// The only sequences let through, and only where colour is on: ESC [ params m
// (colour) and \r ESC [ K (a progress line rewritten).
void ControlEscapingBuf::Put(char ch) {
  const unsigned char c = static_cast<unsigned char>(ch);
  if (!pending_.empty()) {
    const size_t esc = pending_[0] == '\r' ? 1 : 0;  // where ESC is (or will be)
    pending_ += ch;
    const size_t n = pending_.size();
    bool ok = false, done = false;
    if (n == esc + 1) ok = c == 0x1b;
    else if (n == esc + 2) ok = c == '[';
    else if (std::isdigit(c) || c == ';') ok = n < esc + 16;
    else ok = done = esc ? c == 'K' : c == 'm' || c == 'K';
    if (!ok) {
      pending_.pop_back();
      FlushPending();
      Put(ch);
    } else if (done) {
      to_->sputn(pending_.data(), static_cast<std::streamsize>(pending_.size()));
      pending_.clear();
    }
    return;
  }
  if (allow_color_ && (c == 0x1b || c == '\r')) {
    pending_ = ch;
  } else if (IsControl(c)) {
    PutEscaped(c);
  } else {
    to_->sputc(ch);
  }
}

ControlEscapingBuf::int_type ControlEscapingBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  Put(traits_type::to_char_type(c));
  return c;
}

std::streamsize ControlEscapingBuf::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i) Put(s[i]);
  return n;
}

int ControlEscapingBuf::sync() { return to_->pubsync(); }

ScopedControlEscaping::ScopedControlEscaping()
    : out_(std::cout.rdbuf(), UseColor(std::cout)),
      err_(std::cerr.rdbuf(), UseColor(std::cerr)),
      old_out_(std::cout.rdbuf(&out_)),
      old_err_(std::cerr.rdbuf(&err_)) {}

ScopedControlEscaping::~ScopedControlEscaping() {
  std::cout.flush();
  std::cerr.flush();
  std::cout.rdbuf(old_out_);
  std::cerr.rdbuf(old_err_);
}

std::string EscapeControl(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (IsControl(static_cast<unsigned char>(c))) AppendEscaped(out, static_cast<unsigned char>(c));
    else out += c;
  }
  return out;
}

}  // namespace opscope::cli
