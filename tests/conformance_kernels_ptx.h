// conformance_kernels_ptx.h: the cuda half of the conformance suite's test
// kernels (tests/device_conformance_test.cc), as hand-written PTX that the
// driver JIT-compiles for the GPU present, so the test needs no nvcc.
// tests/ptx_assemble_test.cc runs ptxas on it for every architecture.
//   opscope_test_sleep (u64 ns)                      one thread spins on %globaltimer
//   opscope_test_affine (u64 x, u32 n, f32 a, f32 b)  x[i] = x[i] * a + b
#pragma once

inline constexpr char kTestKernelsPtx[] = R"(
.version 7.8
.target sm_75
.address_size 64

.visible .entry opscope_test_sleep(.param .u64 ns)
{
  .reg .pred %p;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
WAIT:
  nanosleep.u32 1000;
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra WAIT;
  ret;
}

.visible .entry opscope_test_affine(.param .u64 x, .param .u32 n, .param .f32 a, .param .f32 b)
{
  .reg .pred %p;
  .reg .b32 %r<6>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [x];
  ld.param.u32 %r1, [n];
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p, %r5, %r1;
  @%p bra DONE;
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r5, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.f32 %f3, [%rd3];
  fma.rn.f32 %f4, %f3, %f1, %f2;
  st.global.f32 [%rd3], %f4;
DONE:
  ret;
}
)";
