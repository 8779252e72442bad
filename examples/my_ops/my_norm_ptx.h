// my_norm_ptx.h: my_norm's cuda kernel as PTX, which the driver JIT-compiles
// for the GPU present (Device::LoadKernel("ptx", ...)): the plugin builds with
// a plain C++ compiler, no nvcc. tests/ptx_assemble_test.cc runs ptxas on it.
//
// One thread per row, as the cpu kernel's work item is one row:
//   y[r, :] = x[r, :] / sqrt(sum(x[r, :]^2) / n + eps)
// Neighbouring threads read rows n floats apart, so a warp's loads are not
// coalesced: a first version, which `ops-debug profile --device cuda` shows
// far from its memory bound (a row per warp would coalesce them).
#pragma once

inline constexpr char kMyNormPtx[] = R"(
.version 7.8
.target sm_75
.address_size 64

.visible .entry my_norm_f32(.param .u64 x, .param .u64 y, .param .u64 rows, .param .u64 n, .param .f32 eps)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<10>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.u64 %rd3, [rows];
  ld.param.u64 %rd4, [n];
  ld.param.f32 %f1, [eps];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  // the row: blockIdx.x * blockDim.x + threadIdx.x
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd5, %r1, %r2;
  cvt.u64.u32 %rd6, %r3;
  add.u64 %rd5, %rd5, %rd6;
  setp.ge.u64 %p, %rd5, %rd3;
  @%p bra DONE;
  // %rd6: the row's first byte offset; %rd7 = &x[row, 0], %rd8 = &x[row + 1, 0]
  mul.lo.u64 %rd6, %rd5, %rd4;
  shl.b64 %rd6, %rd6, 2;
  add.u64 %rd7, %rd1, %rd6;
  shl.b64 %rd9, %rd4, 2;
  add.u64 %rd8, %rd7, %rd9;
  mov.f32 %f2, 0f00000000;
  setp.ge.u64 %p, %rd7, %rd8;
  @%p bra NORM;
SQUARES:
  ld.global.f32 %f3, [%rd7];
  fma.rn.f32 %f2, %f3, %f3, %f2;
  add.u64 %rd7, %rd7, 4;
  setp.lt.u64 %p, %rd7, %rd8;
  @%p bra SQUARES;
NORM:
  // inv = 1 / sqrt(sum / n + eps), each step correctly rounded as the cpu kernel's
  cvt.rn.f32.u64 %f4, %rd4;
  div.rn.f32 %f5, %f2, %f4;
  add.rn.f32 %f6, %f5, %f1;
  sqrt.rn.f32 %f7, %f6;
  rcp.rn.f32 %f8, %f7;
  add.u64 %rd7, %rd1, %rd6;
  add.u64 %rd10, %rd2, %rd6;
  setp.ge.u64 %p, %rd7, %rd8;
  @%p bra DONE;
SCALE:
  ld.global.f32 %f3, [%rd7];
  mul.rn.f32 %f9, %f3, %f8;
  st.global.f32 [%rd10], %f9;
  add.u64 %rd7, %rd7, 4;
  add.u64 %rd10, %rd10, 4;
  setp.lt.u64 %p, %rd7, %rd8;
  @%p bra SCALE;
DONE:
  ret;
}
)";
