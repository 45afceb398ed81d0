/* Filling a case's input tensors: small tensors from the seeded host
 * generator, large ones by device-side copies out of a pool of random
 * values made once per process, so a large case costs copies at device
 * bandwidth instead of generating and uploading every element. */
#include <string.h>

#include "run_int.h"

/*
 * Pool size in elements. Not a power of two, so a tensor whose rows have a
 * power-of-two length does not see the same values in every row; large
 * enough (4M values) that no operator sees a short period.
 */
#define POOL_ELEMS (((int64_t)1 << 22) + 13)

/* splitmix64's finaliser: a seed to a well-spread 64-bit value. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t bits_of(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof(u));
  return u;
}

/* Large random inputs come from a pool where the backend copies on the device. */
static int uses_pool(const zlb__run_t *r, const zlb_tensor_t *t) {
  return t->fill != ZLB_FILL_NONE && t->numel > POOL_ELEMS && r->b->v->memcpy_dtod;
}

static int same_kind(const zlb__pool_t *p, const zlb_tensor_t *t) {
  return p->dtype == t->dtype && p->fill == t->fill && p->lo == t->lo && p->hi == t->hi;
}

/* The pool for t's dtype and distribution, made on first use. */
static int pool_for(zlb__run_t *r, const zlb_tensor_t *t, zlb__pool_t **out,
                    zlb_error_t *err) {
  zlb_tensor_t proto;
  size_t bytes = (size_t)POOL_ELEMS * zlb_dtype_size(t->dtype);
  zlb__pool_t *p;
  void *host;
  int rc;

  for (int i = 0; i < r->npools; i++)
    if (same_kind(&r->pools[i], t)) {
      *out = &r->pools[i];
      return 0;
    }
  if (r->npools == ZLB__MAX_POOLS)
    return ZLB_ENOTFOUND; /* the caller fills the tensor directly */
  p = &r->pools[r->npools];
  memset(p, 0, sizeof(*p));
  p->dtype = t->dtype;
  p->fill = t->fill;
  p->lo = t->lo;
  p->hi = t->hi;
  proto = *t;
  proto.numel = POOL_ELEMS;
  if ((rc = r->b->v->mem_alloc(r->b, bytes, &p->data, err)))
    return zlb_error_prefix(err, "cannot allocate the input pool (%zu bytes)", bytes);
  /* The pool's values depend on the run's seed and the distribution. */
  host = zlb__host_buf(r, ZLB__SLOT_FILL, bytes);
  zlb_fill_host(&proto, host,
                mix64(r->o->seed ^ mix64((uint64_t)t->dtype << 8 ^ (uint64_t)t->fill) ^
                      mix64(bits_of(t->lo)) ^ mix64(~bits_of(t->hi))));
  /* Device-wide sync: the pool is read on the run's stream, which the
   * upload (legacy stream, pageable memory) is not ordered with. */
  if ((rc = r->b->v->memcpy_htod(r->b, p->data, host, bytes, err)) ||
      (rc = r->b->v->sync(r->b, err))) {
    r->b->v->mem_free(r->b, p->data);
    p->data = NULL;
    return rc;
  }
  r->pool_bytes += bytes;
  r->npools++;
  *out = p;
  return 0;
}

size_t zlb__pool_bytes_needed(const zlb__run_t *r, const zlb_tensor_t *t) {
  if (!uses_pool(r, t))
    return 0;
  for (int i = 0; i < r->npools; i++)
    if (same_kind(&r->pools[i], t))
      return 0;
  return (size_t)POOL_ELEMS * zlb_dtype_size(t->dtype);
}

/*
 * Element i of a large tensor is pool[(off + i) mod POOL_ELEMS], with the
 * offset taken from the tensor's seed: the same values for the same seed
 * and case, whatever ran before, and different tensors start at different
 * places.
 */
static int fill_from_pool(zlb__run_t *r, zlb_tensor_t *t, const zlb__pool_t *p,
                          uint64_t seed, zlb_error_t *err) {
  size_t es = zlb_dtype_size(t->dtype);
  int64_t off = (int64_t)(mix64(seed) % (uint64_t)POOL_ELEMS), done = 0;
  int rc;
  while (done < t->numel) {
    int64_t n = POOL_ELEMS - off;
    if (n > t->numel - done)
      n = t->numel - done;
    rc = r->b->v->memcpy_dtod(r->b, (char *)t->data + (size_t)done * es,
                              (const char *)p->data + (size_t)off * es, (size_t)n * es,
                              r->stream, err);
    if (rc)
      return rc;
    done += n;
    off = 0;
  }
  return r->b->v->stream_sync(r->b, r->stream, err);
}

size_t zlb__fill_staging_bytes(const zlb__run_t *r, const zlb_tensor_t *t) {
  if (t->fill == ZLB_FILL_NONE)
    return 0;
  if (uses_pool(r, t))
    return zlb__pool_bytes_needed(r, t); /* a new pool is generated on the host */
  return (size_t)t->numel * zlb_dtype_size(t->dtype);
}

int zlb__fill_input(zlb__run_t *r, zlb_tensor_t *t, uint64_t seed, zlb_error_t *err) {
  zlb__pool_t *p = NULL;
  void *host;
  int rc;

  if (t->fill == ZLB_FILL_NONE)
    return 0;
  if (uses_pool(r, t)) {
    rc = pool_for(r, t, &p, err);
    if (!rc)
      return fill_from_pool(r, t, p, seed, err);
    if (rc != ZLB_ENOTFOUND)
      return rc;
  }
  host = zlb__host_buf(r, ZLB__SLOT_FILL, (size_t)t->numel * zlb_dtype_size(t->dtype));
  zlb_fill_host(t, host, seed);
  return r->b->v->memcpy_htod(r->b, t->data, host,
                              (size_t)t->numel * zlb_dtype_size(t->dtype), err);
}

void zlb__pools_release(zlb__run_t *r) {
  for (int i = 0; i < r->npools; i++)
    if (r->pools[i].data)
      r->b->v->mem_free(r->b, r->pools[i].data);
  r->npools = 0;
  r->pool_bytes = 0;
}
