#include "core/py_literal.h"

#include <charconv>

namespace opscope {
namespace {

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text) {}

  StatusOr<PyValue> ParseAll() {
    OPSCOPE_ASSIGN_OR_RETURN(PyValue v, Value(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dict");
    return v;
  }

 private:
  Status Error(const std::string& why) const {
    return InvalidArgumentError(why + " at offset " + std::to_string(pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::string_view(" \t\r\n").find(text_[pos_]) != std::string_view::npos) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool EatWord(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  StatusOr<PyValue> Value(int depth) {
    if (depth > 32) return Error("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    char c = text_[pos_];
    PyValue v;
    if (c == '\'' || c == '"') {
      v.kind = PyValue::kStr;
      OPSCOPE_ASSIGN_OR_RETURN(v.str, String());
    } else if (c == '{') {
      v.kind = PyValue::kDict;
      ++pos_;
      while (!Eat('}')) {
        SkipSpace();
        if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return Error("expected a quoted key");
        OPSCOPE_ASSIGN_OR_RETURN(std::string key, String());
        if (!Eat(':')) return Error("expected ':' after key '" + key + "'");
        OPSCOPE_ASSIGN_OR_RETURN(PyValue item, Value(depth + 1));
        v.fields.push_back({std::move(key), std::move(item)});
        if (!Eat(',')) {
          if (!Eat('}')) return Error("expected ',' or '}'");
          break;
        }
      }
    } else if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      v.kind = PyValue::kSeq;
      v.list = c == '[';
      ++pos_;
      bool comma = false;
      while (!Eat(close)) {
        OPSCOPE_ASSIGN_OR_RETURN(PyValue item, Value(depth + 1));
        v.items.push_back(std::move(item));
        if (!Eat(',')) {
          if (!Eat(close)) return Error(std::string("expected ',' or '") + close + "'");
          break;
        }
        comma = true;
      }
      // As in Python, "(4)" is the number 4, not a tuple: only a comma (or
      // nothing, "()") makes one.
      if (!v.list && v.items.size() == 1 && !comma) return std::move(v.items[0]);
    } else if (EatWord("True")) {
      v.kind = PyValue::kBool;
      v.boolean = true;
    } else if (EatWord("False")) {
      v.kind = PyValue::kBool;
    } else if (EatWord("None")) {
      v.kind = PyValue::kNone;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = PyValue::kInt;
      const char* begin = text_.data() + pos_;
      auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), v.integer);
      if (ec != std::errc()) return Error("integer out of range");
      pos_ += static_cast<size_t>(end - begin);
      if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;  // Python 2 longs
    } else {
      return Error(std::string("unexpected character '") + c + "'");
    }
    return v;
  }

  StatusOr<std::string> String() {
    char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;
    return out;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<PyValue> ParsePyLiteral(std::string_view text) { return LiteralParser(text).ParseAll(); }

}  // namespace opscope
