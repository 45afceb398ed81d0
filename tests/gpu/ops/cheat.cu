/* Test-only CUDA operators whose candidate games the benchmark, for
 * `zlbench run --integrity` (tests/gpu/test_cuda_integrity.sh). Each is a
 * float32 copy of a tensor of the shape's extents; each candidate passes
 * the accuracy check of its first call and must be caught later:
 *
 *   cheat_cache_cu   keeps a copy of its result per input address and,
 *                    when the address comes again, copies that back
 *                    (cudaMemcpyAsync: a graph captures it too);
 *   cheat_skip_cu    launches its kernel on the first call for an output
 *                    and nothing afterwards;
 *   cheat_stream_cu  launches its kernel on a stream of its own (joined
 *                    back with an event, so every result is right: only
 *                    the stream gives it away);
 *   cheat_rate_cu    copies honestly but declares a thousand times the
 *                    bytes it moves;
 *   cheat_rate_l2_cu declares 20 MB per call: a working set that fits in
 *                    half an H200's L2, judged by the L2's bandwidth when
 *                    warm and refused by memory's when cold.
 */
#include "common.cuh"

namespace zlbc {
namespace {

__global__ void cheat_copy_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i];
}

int64_t numel(const zlb_case_t *c) { return c->in[0].numel; }

int cheat_init(zlb_env_t *env, zlb_case_t *c, double bytes_factor) {
  const zlb_shape_t *s = &c->shape;
  if (c->dtype != ZLB_DT_FLOAT32)
    return errf(env, ZLB_EINVAL, "cheat: float32 only");
  if (s->ndim != 1 || s->dims[0] < 1 || s->dims[0] > (int64_t)1 << 30)
    return errf(env, ZLB_EINVAL, "cheat: the shape is [elements], 1 to 2^30");
  c->n_in = 1;
  tensor_set1(&c->in[0], "x", ZLB_DT_FLOAT32, s->dims[0], ZLB_FILL_NORMAL, 0.0, 1.0);
  c->n_out = 1;
  tensor_set1(&c->out[ZLB_BASELINE][0], "out", ZLB_DT_FLOAT32, s->dims[0], ZLB_FILL_NONE, 0, 0);
  c->bytes = 8.0 * (double)s->dims[0] * bytes_factor;
  c->flops = 0;
  c->check = ZLB_CHECK_EXACT;
  snprintf(c->detail, sizeof c->detail, "[%lld]", (long long)s->dims[0]);
  return 0;
}

int honest_init(zlb_env_t *env, zlb_case_t *c) { return cheat_init(env, c, 1.0); }
int rate_init(zlb_env_t *env, zlb_case_t *c) { return cheat_init(env, c, 1000.0); }
/* 40 MB declared whatever the shape: less than an H100/H200 L2 (50 MB),
 * far more than a call of a small shape can move. */
int rate_l2_init(zlb_env_t *env, zlb_case_t *c) {
  int rc = cheat_init(env, c, 1.0);
  c->bytes = 20e6;
  return rc;
}

int launch_copy(zlb_env_t *env, zlb_case_t *c, int which, cudaStream_t s) {
  int64_t n = numel(c);
  int blocks = (int)min64(ceil_div(n, 256), 4L * sm_count(env));
  (void)cudaGetLastError();
  cheat_copy_kernel<<<blocks, 256, 0, s>>>(static_cast<const float *>(c->in[0].data),
                                           static_cast<float *>(c->out[which][0].data), n);
  ZLBC_LAUNCHED(env, "cheat_copy_kernel");
  return 0;
}

int honest_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  return launch_copy(env, c, which, as_stream(stream));
}

/* Results kept by input address (the last few). */
struct cached {
  const void *in;
  size_t bytes;
  void *result;
};
cached g_cache[8];

int cache_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const void *in = c->in[0].data;
  size_t bytes = (size_t)numel(c) * sizeof(float);
  void *out = c->out[which][0].data;
  cudaStream_t s = as_stream(stream);
  for (cached &e : g_cache)
    if (e.in == in && e.bytes == bytes) {
      ZLBC_CUDA(env, cudaMemcpyAsync(out, e.result, bytes, cudaMemcpyDeviceToDevice, s));
      return 0;
    }
  /* A new address (the accuracy check's call, outside any capture). */
  cached &slot = g_cache[0];
  if (slot.result) {
    ZLBC_CUDA(env, cudaStreamSynchronize(s));
    ZLBC_CUDA(env, cudaFree(slot.result));
  }
  for (size_t i = 0; i + 1 < sizeof(g_cache) / sizeof(g_cache[0]); i++)
    g_cache[i] = g_cache[i + 1];
  cached &e = g_cache[sizeof(g_cache) / sizeof(g_cache[0]) - 1];
  e = cached{nullptr, 0, nullptr};
  ZLBC_CUDA(env, cudaMalloc(&e.result, bytes ? bytes : 1));
  ZLBC_TRY(launch_copy(env, c, which, s));
  ZLBC_CUDA(env, cudaMemcpyAsync(e.result, out, bytes, cudaMemcpyDeviceToDevice, s));
  e.in = in;
  e.bytes = bytes;
  return 0;
}

const void *g_skip_done;

int skip_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  if (g_skip_done == c->out[which][0].data)
    return 0; /* "already computed" */
  g_skip_done = c->out[which][0].data;
  return launch_copy(env, c, which, as_stream(stream));
}

cudaStream_t g_side;
cudaEvent_t g_fork, g_join;

int stream_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  cudaStream_t s = as_stream(stream);
  if (!g_side) {
    ZLBC_CUDA(env, cudaStreamCreateWithFlags(&g_side, cudaStreamNonBlocking));
    ZLBC_CUDA(env, cudaEventCreateWithFlags(&g_fork, cudaEventDisableTiming));
    ZLBC_CUDA(env, cudaEventCreateWithFlags(&g_join, cudaEventDisableTiming));
  }
  ZLBC_CUDA(env, cudaEventRecord(g_fork, s));
  ZLBC_CUDA(env, cudaStreamWaitEvent(g_side, g_fork, 0));
  ZLBC_TRY(launch_copy(env, c, which, g_side));
  ZLBC_CUDA(env, cudaEventRecord(g_join, g_side));
  ZLBC_CUDA(env, cudaStreamWaitEvent(s, g_join, 0));
  return 0;
}

#define CHEAT_OP(NAME, INIT, CAND, DOC)                                                       \
  ZLBC_OP(NAME, "test", ZLB_DT_BIT(ZLB_DT_FLOAT32), "[elements]", DOC, INIT, nullptr,       \
          ZLBC_IMPL("ref", 0, nullptr, &honest_enqueue), ZLBC_IMPL("cheat", 0, nullptr, CAND))

const zlb_op_t kCheatOps[] = {
    CHEAT_OP("cheat_cache_cu", &honest_init, &cache_enqueue,
             "test only: the candidate hands back a result cached by input address"),
    CHEAT_OP("cheat_skip_cu", &honest_init, &skip_enqueue,
             "test only: the candidate computes on its first call only"),
    CHEAT_OP("cheat_stream_cu", &honest_init, &stream_enqueue,
             "test only: the candidate runs its kernel on a stream of its own"),
    CHEAT_OP("cheat_rate_cu", &rate_init, &honest_enqueue,
             "test only: the case declares a thousand times the bytes it moves"),
    CHEAT_OP("cheat_rate_l2_cu", &rate_l2_init, &honest_enqueue,
             "test only: the case declares 20 MB, which fits in half the L2"),
    CHEAT_OP("honest_copy_cu", &honest_init, &honest_enqueue,
             "test only: the candidate copies on the stream it is given (the control)"),
};

} // namespace
} // namespace zlbc

ZLBC_HIDDEN int zlbt_register_cheats(zlb_op_registrar_t *r) {
  int rc = 0;
  for (const zlb_op_t &op : zlbc::kCheatOps)
    if (!rc)
      rc = r->add_op(r, &op);
  return rc;
}
