// File: ops/undeclared_reads.h
// What an Attrs validated against its op remembers: the op's name, the
// attributes it declares, and the first read of a name it does not declare.
// Kernels cannot throw and a read cannot return a Status, so the read records
// the error here and the dispatcher fails the launch with it afterwards.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opscope/status.h"

namespace opscope {

class UndeclaredReads {
 public:
  UndeclaredReads(std::string op, std::vector<std::string> declared)
      : op_(std::move(op)), declared_(std::move(declared)) {}

  bool declares(std::string_view name) const;
  // Records `name` as read undeclared, unless an earlier read was.
  void Note(std::string_view kind, std::string_view name);
  Status status() const;

  // "op my_norm read attribute 'epz', which it does not declare (it declares: eps)"
  static std::string Message(std::string_view op, std::string_view kind, std::string_view name,
                             const std::vector<std::string>& declared);

 private:
  const std::string op_;
  const std::vector<std::string> declared_;
  mutable std::mutex mu_;  // the blocks of a launch may read at once
  std::string first_;      // "" while every read was declared
};

}  // namespace opscope
