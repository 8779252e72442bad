// File: layout/scope_tree.h
// Walking the scope tree of a layout request: depths, and the lowest common
// scope of two items with the child of it that holds each.
#pragma once

#include <vector>

#include "layout/layered.h"

namespace opscope::layout {

// Depth of each scope below the root (the root is 0).
std::vector<int> ScopeDepths(const std::vector<Scope>& scopes);

struct Climb {
  int lca = 0;
  int from_scope = -1, to_scope = -1;  // the child scope of lca on each side; -1: the item itself
};

Climb ClimbToCommon(const std::vector<Scope>& scopes, const std::vector<int>& depth, int a, int b);

}  // namespace opscope::layout
