/* rand on the host: uniform [0, 1) float32 from counter-based generators
 * keyed by env->rng->seed at counter env->rng->offset. Element i of a call
 * uses counter offset + i; each call advances offset by numel rounded up to
 * a multiple of 4 (one Philox block per 4 elements). The baseline hashes
 * every counter with splitmix64; the candidate is Philox4x32-10 (Salmon et
 * al., SC'11), blocks computed PHILOX_LANES at a time so the rounds
 * vectorise. Same seed and offset, same output. */
#include "host_int.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u
#define PHILOX_ROUNDS 10
#define PHILOX_LANES 8

static int rand_case_init(zlb_env_t *env, zlb_case_t *c) {
  const zlb_shape_t *s = &c->shape;
  int rc;
  zlb__host_case_begin(c);
  rc = zlb__host_check_case(env, c, "rand", ZLB_DT_BIT(ZLB_DT_FLOAT32), 1, ZLB_MAX_DIMS);
  if (rc)
    return rc;
  c->n_in = 0;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "out", c->dtype, s->ndim, s->dims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  c->n_out = 1;
  c->bytes = 4.0 * (double)c->out[ZLB_BASELINE][0].numel;
  c->flops = 0.0;
  c->check = ZLB_CHECK_STAT;
  c->stat_mean = 0.5;
  c->stat_var = 1.0 / 12.0;
  zlb__host_detail_dims(c, s->ndim, s->dims);
  return 0;
}

/* Take the counter range [offset, offset + n) and advance the state. */
static int rng_take(zlb_env_t *env, int64_t n, uint64_t *seed, uint64_t *offset) {
  *seed = *offset = 0;
  if (!env->rng)
    return zlb__host_fail(env, ZLB_EINVAL, "rand: env->rng is NULL; the impl is flagged ZLB_IMPL_USES_RNG");
  *seed = env->rng->seed;
  *offset = env->rng->offset;
  env->rng->offset += ((uint64_t)n + 3u) & ~(uint64_t)3u;
  return 0;
}

/* top 24 bits -> [0, 1): every value is exact in float and below 1 */
static float u32_to_unit(uint32_t u) {
  return (float)(int32_t)(u >> 8) * (1.0f / 16777216.0f); /* signed: cvtdq2ps */
}

static uint64_t splitmix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int rand_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  float *out = y->data;
  uint64_t seed, offset;
  int64_t i;
  int rc;
  (void)stream;
  if ((rc = rng_take(env, y->numel, &seed, &offset)) != 0)
    return rc;
  for (i = 0; i < y->numel; i++) {
    uint64_t z = splitmix64(seed + (offset + (uint64_t)i + 1u) * 0x9E3779B97F4A7C15ull);
    out[i] = u32_to_unit((uint32_t)(z >> 32));
  }
  return 0;
}

/*
 * Philox4x32-10 of PHILOX_LANES consecutive 128-bit counters
 * (ctr, ctr+1, ...) as (lo32, hi32, 0, 0) under key (k0, k1); out holds
 * 4 * PHILOX_LANES words, block by block.
 */
static void philox_lanes(uint64_t ctr, uint32_t k0, uint32_t k1, uint32_t *restrict out) {
  uint32_t x0[PHILOX_LANES], x1[PHILOX_LANES], x2[PHILOX_LANES], x3[PHILOX_LANES];
  int l, r;
  for (l = 0; l < PHILOX_LANES; l++) {
    uint64_t cl = ctr + (uint64_t)l;
    x0[l] = (uint32_t)cl;
    x1[l] = (uint32_t)(cl >> 32);
    x2[l] = 0;
    x3[l] = 0;
  }
  for (r = 0; r < PHILOX_ROUNDS; r++) {
    for (l = 0; l < PHILOX_LANES; l++) {
      uint64_t p0 = (uint64_t)PHILOX_M0 * x0[l];
      uint64_t p1 = (uint64_t)PHILOX_M1 * x2[l];
      uint32_t n0 = (uint32_t)(p1 >> 32) ^ x1[l] ^ k0;
      uint32_t n2 = (uint32_t)(p0 >> 32) ^ x3[l] ^ k1;
      x1[l] = (uint32_t)p1;
      x3[l] = (uint32_t)p0;
      x0[l] = n0;
      x2[l] = n2;
    }
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  for (l = 0; l < PHILOX_LANES; l++) {
    out[4 * l + 0] = x0[l];
    out[4 * l + 1] = x1[l];
    out[4 * l + 2] = x2[l];
    out[4 * l + 3] = x3[l];
  }
}

static int rand_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  float *out = y->data;
  uint32_t words[4 * PHILOX_LANES];
  uint64_t seed, offset, block;
  int64_t i, n = y->numel;
  int l, rc;
  (void)stream;
  if ((rc = rng_take(env, n, &seed, &offset)) != 0)
    return rc;
  /* element i uses word (offset + i) % 4 of block (offset + i) / 4 */
  block = offset / 4u;
  i = -(int64_t)(offset % 4u);
  for (; i < n; i += 4 * PHILOX_LANES, block += PHILOX_LANES) {
    philox_lanes(block, (uint32_t)seed, (uint32_t)(seed >> 32), words);
    if (i >= 0 && i + 4 * PHILOX_LANES <= n) {
      for (l = 0; l < 4 * PHILOX_LANES; l++)
        out[i + l] = u32_to_unit(words[l]);
    } else {
      for (l = 0; l < 4 * PHILOX_LANES; l++)
        if (i + l >= 0 && i + l < n)
          out[i + l] = u32_to_unit(words[l]);
    }
  }
  return 0;
}

static const zlb_op_t random_ops[] = {
    {ZLB_OP_ABI_VERSION, "rand", "random", HOST_BACKEND, ZLB_DT_BIT(ZLB_DT_FLOAT32),
     "extents", "uniform [0, 1) float32 from a counter-based generator", rand_case_init,
     NULL, NULL, {"splitmix64", ZLB_IMPL_USES_RNG, NULL, rand_ref, NULL},
     {"philox", ZLB_IMPL_USES_RNG, NULL, rand_fast, NULL}, NULL, NULL},
};

int zlb__host_register_random(zlb_op_registrar_t *r) {
  return zlb__host_add_ops(r, random_ops, sizeof random_ops / sizeof random_ops[0]);
}
