/* The CUDA corpus (corpus/cuda/) built with hipcc: the CUDA runtime API,
 * types and intrinsics the portable kernels use, mapped to HIP's. The
 * kernels are not forked: cuda_shim/ holds cuda_runtime.h, cuda_fp16.h and
 * cuda_bf16.h, which include this header, and comes first on hipcc's
 * include path. A compile check (tests/hip/compile_corpus.sh), not a port
 * that runs: see corpus/hip/README.md for what does not port. */
#ifndef ZLB_HIP_PORT_H
#define ZLB_HIP_PORT_H

#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bfloat16.h>

/* ---- runtime API ------------------------------------------------------------ */
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorLaunchFailure hipErrorLaunchFailure
#define cudaErrorIllegalAddress hipErrorIllegalAddress
#define cudaStream_t hipStream_t
#define cudaEvent_t hipEvent_t
#define cudaGetLastError hipGetLastError
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaEventCreate hipEventCreate
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventDestroy hipEventDestroy
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpy2DAsync hipMemcpy2DAsync
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemsetAsync hipMemsetAsync
#define cudaHostAlloc hipHostMalloc
#define cudaHostAllocDefault hipHostMallocDefault
#define cudaFreeHost hipHostFree
#define cudaMalloc hipMalloc
#define cudaFree hipFree

/* ---- types ------------------------------------------------------------------ */
/* HIP 5.2 has hip_bfloat16 (a struct converting to and from float); HIP 6
 * adds __hip_bfloat16 with CUDA's intrinsics. */
typedef hip_bfloat16 __nv_bfloat16;
__host__ __device__ inline __nv_bfloat16 __float2bfloat16_rn(float f) { return hip_bfloat16(f); }
__host__ __device__ inline float __bfloat162float(__nv_bfloat16 b) { return (float)b; }

/* ---- warp intrinsics ---------------------------------------------------------- */
/* HIP 5.2 has no *_sync shuffles: the mask is dropped. A wavefront is 64
 * lanes on CDNA (32 on RDNA): kernels that assume 32 compile but reduce
 * over the wrong width. This is why the check compiles and never runs. */
#define __shfl_xor_sync(mask, v, lane, ...) __shfl_xor((v), (lane), ##__VA_ARGS__)
#define __shfl_up_sync(mask, v, delta, ...) __shfl_up((v), (delta), ##__VA_ARGS__)
#define __shfl_down_sync(mask, v, delta, ...) __shfl_down((v), (delta), ##__VA_ARGS__)
#define __shfl_sync(mask, v, lane, ...) __shfl((v), (lane), ##__VA_ARGS__)

#endif
