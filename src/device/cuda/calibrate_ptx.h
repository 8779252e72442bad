// File: device/cuda/calibrate_ptx.h
// The kernels that calibrate a GPU (CalibrateDevice asks the device for them:
// Device::calibration_kernels, which the cuda backend answers with these), as PTX the driver JIT-compiles for the GPU present, so
// the library needs no nvcc. Hand-written; tests/ptx_assemble_test.cc runs
// ptxas on them for every architecture the toolkit targets.
//
// The bandwidth kernels walk n 16-byte vectors with a grid-stride loop
// (thread i takes i, i + threads, ...): every warp reads 512 contiguous bytes
// per step, and a grid of a few blocks per SM keeps enough loads in flight to
// reach the DRAM's rate. The FMA kernels keep 8 independent chains per thread
// (so the FMA latency hides behind the other chains and warps) and do 32 FMAs
// per loop step. Results that nobody needs are stored only when they equal a
// `never` argument the host sets to a value they cannot take, so ptxas cannot
// drop the work that feeds them.
#pragma once

namespace opscope {

// Entries:
//   opscope_calibrate_read  (u64 src, u64 n, f32 never, u64 sink)   sum of n float4s
//   opscope_calibrate_write (u64 dst, u64 n, f32 value)             dst[i] = value
//   opscope_calibrate_copy  (u64 dst, u64 src, u64 n)               dst[i] = src[i]
//   opscope_calibrate_triad (u64 a, u64 b, u64 c, u64 n, f32 s)     a[i] = b[i] + s * c[i]
//   opscope_calibrate_fma_f32 (u32 steps, f32 never, u64 sink)      64 FLOPs per thread per step
//   opscope_calibrate_fma_f64 (u32 steps, f64 never, u64 sink)      the same in float64
//   opscope_calibrate_empty ()                                      the launch cost alone
inline constexpr int kCalibrateFmaFlopsPerStep = 64;  // 32 FMAs of 2 FLOPs

// Where a grid-stride loop starts and how far it steps, as u64 registers:
// I = blockIdx.x * blockDim.x + threadIdx.x, S = gridDim.x * blockDim.x
// (T: a u64 scratch register; %r1..%r3: b32 scratch the kernel declares).
#define OPSCOPE_PTX_GRID_STRIDE(I, S, T)   \
  "  mov.u32 %r1, %ctaid.x;\n"              \
  "  mov.u32 %r2, %ntid.x;\n"               \
  "  mov.u32 %r3, %tid.x;\n"                \
  "  mul.wide.u32 " I ", %r1, %r2;\n"       \
  "  cvt.u64.u32 " T ", %r3;\n"             \
  "  add.u64 " I ", " I ", " T ";\n"        \
  "  mov.u32 %r1, %nctaid.x;\n"             \
  "  mul.wide.u32 " S ", %r1, %r2;\n"

inline constexpr char kCalibratePtx[] = R"(
.version 7.8
.target sm_75
.address_size 64

.visible .entry opscope_calibrate_read(.param .u64 src, .param .u64 n, .param .f32 never, .param .u64 sink)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<14>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [n];
  ld.param.f32 %f13, [never];
  ld.param.u64 %rd3, [sink];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd3, %rd3;
)"
    OPSCOPE_PTX_GRID_STRIDE("%rd4", "%rd5", "%rd6")
R"(  mov.f32 %f1, 0f00000000;
  mov.f32 %f2, 0f00000000;
  mov.f32 %f3, 0f00000000;
  mov.f32 %f4, 0f00000000;
  setp.ge.u64 %p, %rd4, %rd2;
  @%p bra SUM;
LOOP:
  shl.b64 %rd6, %rd4, 4;
  add.u64 %rd7, %rd1, %rd6;
  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd7];
  add.f32 %f1, %f1, %f5;
  add.f32 %f2, %f2, %f6;
  add.f32 %f3, %f3, %f7;
  add.f32 %f4, %f4, %f8;
  add.u64 %rd4, %rd4, %rd5;
  setp.lt.u64 %p, %rd4, %rd2;
  @%p bra LOOP;
SUM:
  add.f32 %f9, %f1, %f2;
  add.f32 %f10, %f3, %f4;
  add.f32 %f11, %f9, %f10;
  setp.neu.f32 %p, %f11, %f13;
  @%p bra DONE;
  st.global.f32 [%rd3], %f11;
DONE:
  ret;
}

.visible .entry opscope_calibrate_write(.param .u64 dst, .param .u64 n, .param .f32 value)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [dst];
  ld.param.u64 %rd2, [n];
  ld.param.f32 %f1, [value];
  cvta.to.global.u64 %rd1, %rd1;
)"
    OPSCOPE_PTX_GRID_STRIDE("%rd4", "%rd5", "%rd6")
R"(  setp.ge.u64 %p, %rd4, %rd2;
  @%p bra DONE;
LOOP:
  shl.b64 %rd6, %rd4, 4;
  add.u64 %rd7, %rd1, %rd6;
  st.global.v4.f32 [%rd7], {%f1, %f1, %f1, %f1};
  add.u64 %rd4, %rd4, %rd5;
  setp.lt.u64 %p, %rd4, %rd2;
  @%p bra LOOP;
DONE:
  ret;
}

.visible .entry opscope_calibrate_copy(.param .u64 dst, .param .u64 src, .param .u64 n)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<9>;
  .reg .f32 %f<5>;
  ld.param.u64 %rd1, [dst];
  ld.param.u64 %rd2, [src];
  ld.param.u64 %rd3, [n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
)"
    OPSCOPE_PTX_GRID_STRIDE("%rd4", "%rd5", "%rd6")
R"(  setp.ge.u64 %p, %rd4, %rd3;
  @%p bra DONE;
LOOP:
  shl.b64 %rd6, %rd4, 4;
  add.u64 %rd7, %rd2, %rd6;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd7];
  add.u64 %rd8, %rd1, %rd6;
  st.global.v4.f32 [%rd8], {%f1, %f2, %f3, %f4};
  add.u64 %rd4, %rd4, %rd5;
  setp.lt.u64 %p, %rd4, %rd3;
  @%p bra LOOP;
DONE:
  ret;
}

.visible .entry opscope_calibrate_triad(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 n, .param .f32 s)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<14>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [c];
  ld.param.u64 %rd4, [n];
  ld.param.f32 %f13, [s];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvta.to.global.u64 %rd3, %rd3;
)"
    OPSCOPE_PTX_GRID_STRIDE("%rd5", "%rd6", "%rd7")
R"(  setp.ge.u64 %p, %rd5, %rd4;
  @%p bra DONE;
LOOP:
  shl.b64 %rd7, %rd5, 4;
  add.u64 %rd8, %rd2, %rd7;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd8];
  add.u64 %rd9, %rd3, %rd7;
  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd9];
  fma.rn.f32 %f9, %f13, %f5, %f1;
  fma.rn.f32 %f10, %f13, %f6, %f2;
  fma.rn.f32 %f11, %f13, %f7, %f3;
  fma.rn.f32 %f12, %f13, %f8, %f4;
  add.u64 %rd10, %rd1, %rd7;
  st.global.v4.f32 [%rd10], {%f9, %f10, %f11, %f12};
  add.u64 %rd5, %rd5, %rd6;
  setp.lt.u64 %p, %rd5, %rd4;
  @%p bra LOOP;
DONE:
  ret;
}
)"
// The FMA kernels, one text per type by the same steps: 8 chains acc = acc * m + c,
// unrolled 4 times, then summed and stored if the sum equals `never`.
#define OPSCOPE_CALIBRATE_FMA_PTX(T, ONE, M, C)                                        \
  "\n.visible .entry opscope_calibrate_fma_" #T                                        \
  "(.param .u32 steps, .param ." #T " never, .param .u64 sink)\n"                      \
  "{\n"                                                                                \
  "  .reg .pred %p;\n"                                                                 \
  "  .reg .b32 %r<4>;\n"                                                               \
  "  .reg .b64 %rd<2>;\n"                                                              \
  "  .reg ." #T " %a<8>;\n"                                                            \
  "  .reg ." #T " %x<6>;\n"                                                            \
  "  ld.param.u32 %r1, [steps];\n"                                                     \
  "  ld.param." #T " %x4, [never];\n"                                                  \
  "  ld.param.u64 %rd1, [sink];\n"                                                     \
  "  cvta.to.global.u64 %rd1, %rd1;\n"                                                 \
  "  mov.u32 %r2, %tid.x;\n"                                                           \
  "  cvt.rn." #T ".u32 %x0, %r2;\n"                                                    \
  "  mov." #T " %x1, " M ";\n"                                                         \
  "  mov." #T " %x2, " C ";\n"                                                         \
  "  mov." #T " %x3, " ONE ";\n"                                                       \
  "  add." #T " %a0, %x0, %x3;\n"                                                      \
  "  add." #T " %a1, %a0, %x3;\n"                                                      \
  "  add." #T " %a2, %a1, %x3;\n"                                                      \
  "  add." #T " %a3, %a2, %x3;\n"                                                      \
  "  add." #T " %a4, %a3, %x3;\n"                                                      \
  "  add." #T " %a5, %a4, %x3;\n"                                                      \
  "  add." #T " %a6, %a5, %x3;\n"                                                      \
  "  add." #T " %a7, %a6, %x3;\n"                                                      \
  "  mov.u32 %r3, 0;\n"                                                                \
  "  setp.eq.u32 %p, %r1, 0;\n"                                                        \
  "  @%p bra SUM;\n"                                                                   \
  "LOOP:\n"                                                                            \
  OPSCOPE_CALIBRATE_FMA_8(T) OPSCOPE_CALIBRATE_FMA_8(T)                                \
  OPSCOPE_CALIBRATE_FMA_8(T) OPSCOPE_CALIBRATE_FMA_8(T)                                \
  "  add.u32 %r3, %r3, 1;\n"                                                           \
  "  setp.lt.u32 %p, %r3, %r1;\n"                                                      \
  "  @%p bra LOOP;\n"                                                                  \
  "SUM:\n"                                                                             \
  "  add." #T " %a0, %a0, %a1;\n"                                                      \
  "  add." #T " %a2, %a2, %a3;\n"                                                      \
  "  add." #T " %a4, %a4, %a5;\n"                                                      \
  "  add." #T " %a6, %a6, %a7;\n"                                                      \
  "  add." #T " %a0, %a0, %a2;\n"                                                      \
  "  add." #T " %a4, %a4, %a6;\n"                                                      \
  "  add." #T " %x5, %a0, %a4;\n"                                                      \
  "  setp.neu." #T " %p, %x5, %x4;\n"                                                  \
  "  @%p bra DONE;\n"                                                                  \
  "  st.global." #T " [%rd1], %x5;\n"                                                  \
  "DONE:\n"                                                                            \
  "  ret;\n"                                                                           \
  "}\n"
#define OPSCOPE_CALIBRATE_FMA_8(T)                                                     \
  "  fma.rn." #T " %a0, %a0, %x1, %x2;\n  fma.rn." #T " %a1, %a1, %x1, %x2;\n"         \
  "  fma.rn." #T " %a2, %a2, %x1, %x2;\n  fma.rn." #T " %a3, %a3, %x1, %x2;\n"         \
  "  fma.rn." #T " %a4, %a4, %x1, %x2;\n  fma.rn." #T " %a5, %a5, %x1, %x2;\n"         \
  "  fma.rn." #T " %a6, %a6, %x1, %x2;\n  fma.rn." #T " %a7, %a7, %x1, %x2;\n"
    OPSCOPE_CALIBRATE_FMA_PTX(f32, "0f3F800000", "0f3F7FFFEF", "0f33D6BF95")
    OPSCOPE_CALIBRATE_FMA_PTX(f64, "0d3FF0000000000000", "0d3FEFFFFDE7210BE9",
                              "0d3E7AD7F29ABCAF48")
R"(
.visible .entry opscope_calibrate_empty()
{
  ret;
}
)";
#undef OPSCOPE_CALIBRATE_FMA_8
#undef OPSCOPE_CALIBRATE_FMA_PTX
#undef OPSCOPE_PTX_GRID_STRIDE

}  // namespace opscope
