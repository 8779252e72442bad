// diagnose_ptx.h: the cuda kernels of two diagnose examples, as PTX that the
// driver JIT-compiles (Device::LoadKernel("ptx", ...)), each with the bug of
// its cpu kernel, so `ops-debug diagnose --device cuda` is shown on both
// kinds of failure a GPU kernel has. tests/ptx_assemble_test.cc runs ptxas on
// them; tests/gpu/run_on_gpu.sh diagnoses them on a GPU.
//
// ramp_tail_f32(y, n, start, step): y[i] = start + step * i, one thread per
// element, grid = ceil(n / 256) blocks of 256. BUG: no `i < n` guard, so the
// last block writes on past y[n - 1] when n is not a multiple of 256: the
// canaries after the output see it (cudaMalloc's slack absorbs it silently).
//
// mantissa_f32(x, y, n): y[i] = x[i] scaled into [1, 2) by halving and
// doubling. BUG: for x <= 0 the doubling loop never exits (v < 1 forever),
// the cpu kernel's hang on the GPU.
#pragma once

inline constexpr char kDiagnosePtx[] = R"(
.version 7.8
.target sm_75
.address_size 64

.visible .entry ramp_tail_f32(.param .u64 y, .param .u64 n, .param .f32 start, .param .f32 step)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  .reg .f32 %f<5>;
  ld.param.u64 %rd1, [y];
  ld.param.f32 %f1, [start];
  ld.param.f32 %f2, [step];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd2, %r1, %r2;
  cvt.u64.u32 %rd3, %r3;
  add.u64 %rd2, %rd2, %rd3;
  // the bug: n is never compared with the index
  cvt.rn.f32.u64 %f3, %rd2;
  fma.rn.f32 %f4, %f2, %f3, %f1;
  shl.b64 %rd4, %rd2, 2;
  add.u64 %rd5, %rd1, %rd4;
  st.global.f32 [%rd5], %f4;
  ret;
}

.visible .entry mantissa_f32(.param .u64 x, .param .u64 y, .param .u64 n)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.u64 %rd3, [n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd4, %r1, %r2;
  cvt.u64.u32 %rd5, %r3;
  add.u64 %rd4, %rd4, %rd5;
  setp.ge.u64 %p, %rd4, %rd3;
  @%p bra DONE;
  shl.b64 %rd6, %rd4, 2;
  add.u64 %rd7, %rd1, %rd6;
  ld.global.f32 %f1, [%rd7];
HALVE:
  setp.lt.f32 %p, %f1, 0f40000000;
  @%p bra DOUBLE;
  mul.rn.f32 %f1, %f1, 0f3F000000;
  bra HALVE;
DOUBLE:
  // the bug: for v <= 0 this stays true for ever
  setp.ge.f32 %p, %f1, 0f3F800000;
  @%p bra STORE;
  mul.rn.f32 %f1, %f1, 0f40000000;
  bra DOUBLE;
STORE:
  add.u64 %rd7, %rd2, %rd6;
  st.global.f32 [%rd7], %f1;
DONE:
  ret;
}
)";
