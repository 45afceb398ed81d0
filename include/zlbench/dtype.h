/* Element types shared by the harness and operator libraries. Everything
 * here is static inline so operator libraries need not link libzlbench. */
#ifndef ZLBENCH_DTYPE_H
#define ZLBENCH_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values are ABI (operator libraries store them): append only. */
typedef enum zlb_dtype {
  ZLB_DT_FLOAT16 = 0,
  ZLB_DT_BFLOAT16 = 1,
  ZLB_DT_FLOAT32 = 2,
  ZLB_DT_FLOAT64 = 3,
  ZLB_DT_INT8 = 4,
  ZLB_DT_UINT8 = 5,
  ZLB_DT_INT16 = 6,
  ZLB_DT_INT32 = 7,
  ZLB_DT_INT64 = 8,
  ZLB_DT_BOOL = 9,
  ZLB_DT_COUNT
} zlb_dtype_t;

#define ZLB_DT_BIT(d) (1u << (unsigned)(d))
#define ZLB_DT_FLOATS \
  (ZLB_DT_BIT(ZLB_DT_FLOAT16) | ZLB_DT_BIT(ZLB_DT_BFLOAT16) | ZLB_DT_BIT(ZLB_DT_FLOAT32))

static inline size_t zlb_dtype_size(zlb_dtype_t d) {
  switch (d) {
  case ZLB_DT_FLOAT16: case ZLB_DT_BFLOAT16: case ZLB_DT_INT16: return 2;
  case ZLB_DT_FLOAT32: case ZLB_DT_INT32: return 4;
  case ZLB_DT_FLOAT64: case ZLB_DT_INT64: return 8;
  case ZLB_DT_INT8: case ZLB_DT_UINT8: case ZLB_DT_BOOL: return 1;
  default: return 0;
  }
}

/** Canonical name: "float16", "bfloat16", "float32", ... */
static inline const char *zlb_dtype_name(zlb_dtype_t d) {
  static const char *const names[ZLB_DT_COUNT] = {
      "float16", "bfloat16", "float32", "float64", "int8",
      "uint8",   "int16",    "int32",   "int64",   "bool"};
  return (unsigned)d < ZLB_DT_COUNT ? names[d] : "unknown";
}

static inline int zlb_dtype_is_float(zlb_dtype_t d) {
  return d == ZLB_DT_FLOAT16 || d == ZLB_DT_BFLOAT16 || d == ZLB_DT_FLOAT32 ||
         d == ZLB_DT_FLOAT64;
}

/* IEEE half <-> float, round to nearest even. */
static inline float zlb_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
           man = h & 0x3ffu, bits;
  float f;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: renormalise */
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) {
        man <<= 1;
        exp--;
      }
      man &= 0x3ffu;
      bits = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t zlb_float_to_half(float f) {
  uint32_t x, sign, man;
  int32_t exp;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  exp = (int32_t)((x >> 23) & 0xffu);
  man = x & 0x7fffffu;
  if (exp == 0xff) /* inf / nan */
    return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
  exp = exp - 127 + 15;
  if (exp >= 0x1f)
    return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) {
    uint32_t m, shift, half_bit, rem;
    if (exp < -10)
      return (uint16_t)sign;
    m = man | 0x800000u;
    shift = (uint32_t)(14 - exp);
    half_bit = 1u << (shift - 1);
    rem = m & ((1u << shift) - 1);
    m >>= shift;
    if (rem > half_bit || (rem == half_bit && (m & 1)))
      m++;
    return (uint16_t)(sign | m);
  }
  {
    uint32_t r = sign | ((uint32_t)exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1)))
      r++; /* may carry into the exponent: that is the correct rounding */
    return (uint16_t)r;
  }
}

static inline float zlb_bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t zlb_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
    return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/** Element `i` of an array of dtype `d`, as a double. */
static inline double zlb_load(zlb_dtype_t d, const void *p, int64_t i) {
  switch (d) {
  case ZLB_DT_FLOAT16: return zlb_half_to_float(((const uint16_t *)p)[i]);
  case ZLB_DT_BFLOAT16: return zlb_bf16_to_float(((const uint16_t *)p)[i]);
  case ZLB_DT_FLOAT32: return ((const float *)p)[i];
  case ZLB_DT_FLOAT64: return ((const double *)p)[i];
  case ZLB_DT_INT8: return ((const int8_t *)p)[i];
  case ZLB_DT_UINT8: return ((const uint8_t *)p)[i];
  case ZLB_DT_INT16: return ((const int16_t *)p)[i];
  case ZLB_DT_INT32: return ((const int32_t *)p)[i];
  case ZLB_DT_INT64: return (double)((const int64_t *)p)[i];
  case ZLB_DT_BOOL: return ((const uint8_t *)p)[i];
  default: return 0.0;
  }
}

/** Store `v` (rounded to the dtype) as element `i`. */
static inline void zlb_store(zlb_dtype_t d, void *p, int64_t i, double v) {
  switch (d) {
  case ZLB_DT_FLOAT16: ((uint16_t *)p)[i] = zlb_float_to_half((float)v); break;
  case ZLB_DT_BFLOAT16: ((uint16_t *)p)[i] = zlb_float_to_bf16((float)v); break;
  case ZLB_DT_FLOAT32: ((float *)p)[i] = (float)v; break;
  case ZLB_DT_FLOAT64: ((double *)p)[i] = v; break;
  case ZLB_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
  case ZLB_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case ZLB_DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
  case ZLB_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
  case ZLB_DT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
  case ZLB_DT_BOOL: ((uint8_t *)p)[i] = v != 0.0; break;
  default: break;
  }
}

#ifdef __cplusplus
}
#endif
#endif
