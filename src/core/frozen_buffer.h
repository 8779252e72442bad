// File: core/frozen_buffer.h
// Buffers nothing writes again while they live (a model's weights and
// constants, frozen by the graph executor), and data a kernel derives from
// one and keeps: a GEMM's B packed into its kernel's panels once, instead of
// on every call (OpenBLAS packs B on every call, once per block of rows).
//
// The registry holds a weak reference to each frozen buffer: a dead
// buffer's derived data goes when the registry is next swept (as it
// doubles), and a new buffer that happens to get the same address is not
// frozen. Derived data is keyed
// by the kernel's own key and the tensor's view (offset, dtype, shape,
// strides), so two views of one buffer never share a packing.
//
//   FreezeBuffer(weights.buffer());   // the executor, for each constant
//   auto panels = FrozenDerived(w, "gemm_panels", [&] { return Pack(w); });
//   // nullptr where w's buffer is not frozen: the kernel packs as it goes
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "opscope/tensor.h"

namespace opscope {

void FreezeBuffer(const std::shared_ptr<Buffer>& buffer);
bool IsFrozen(const Tensor& t);

// The data derived from t under `key`: make()'s result the first time, the
// same object after, for as long as t's buffer lives. nullptr, without
// calling make, when t's buffer is not frozen; also when make returns
// nullptr (nothing is kept then). Two threads may both run make for the same
// key at once; the first to finish is kept, the other's result dropped.
std::shared_ptr<const void> FrozenDerived(const Tensor& t, const std::string& key,
                                          const std::function<std::shared_ptr<const void>()>& make);

// Frozen buffers alive now.
size_t FrozenBufferCount();

}  // namespace opscope
