/* The spin kernel of the CUDA build of tests/ab/ab_slow.c: one thread
 * that spins on the device's global nanosecond timer for `ns`. */
#include <cuda_runtime.h>

__global__ void zlb_ab_spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

extern "C" int zlb_ab_spin(void *stream, unsigned long long ns) {
  zlb_ab_spin_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(ns);
  return cudaGetLastError() != cudaSuccess;
}
