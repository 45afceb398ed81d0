/* Dtype names as users type them (and as FlagGems logs spell them). */
#include <string.h>
#include <strings.h>

#include "zlbench/ops.h"

static const struct {
  const char *name;
  zlb_dtype_t dt;
} aliases[] = {
    {"float16", ZLB_DT_FLOAT16},  {"fp16", ZLB_DT_FLOAT16},   {"half", ZLB_DT_FLOAT16},
    {"f16", ZLB_DT_FLOAT16},      {"bfloat16", ZLB_DT_BFLOAT16}, {"bf16", ZLB_DT_BFLOAT16},
    {"float32", ZLB_DT_FLOAT32},  {"fp32", ZLB_DT_FLOAT32},   {"float", ZLB_DT_FLOAT32},
    {"f32", ZLB_DT_FLOAT32},      {"float64", ZLB_DT_FLOAT64}, {"fp64", ZLB_DT_FLOAT64},
    {"double", ZLB_DT_FLOAT64},   {"int8", ZLB_DT_INT8},      {"uint8", ZLB_DT_UINT8},
    {"int16", ZLB_DT_INT16},      {"int32", ZLB_DT_INT32},    {"int", ZLB_DT_INT32},
    {"int64", ZLB_DT_INT64},      {"long", ZLB_DT_INT64},     {"bool", ZLB_DT_BOOL},
};

int zlb_dtype_parse(const char *s, zlb_dtype_t *out) {
  if (!strncmp(s, "torch.", 6))
    s += 6;
  for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
    if (!strcasecmp(s, aliases[i].name)) {
      *out = aliases[i].dt;
      return 0;
    }
  return ZLB_EINVAL;
}

int zlb_dtype_list_parse(const char *csv, uint32_t *mask, zlb_error_t *err) {
  zlb_strvec_t v = ZLB_STRVEC_INIT;
  int rc = 0;
  *mask = 0;
  /* "float16,,bfloat16" or a trailing comma: a list with a hole is a typo,
   * not a shorter list. */
  for (const char *p = csv;; p++) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (strspn(p, " \t") >= n && (e || p != csv))
      return zlb_error_set(err, ZLB_EINVAL, "empty item in dtype list '%s'", csv);
    if (!e)
      break;
    p = e;
  }
  zlb_strvec_split(&v, csv, ',');
  for (size_t i = 0; i < v.n; i++) {
    zlb_dtype_t d;
    if (zlb_dtype_parse(v.v[i], &d)) {
      rc = zlb_error_set(err, ZLB_EINVAL,
                         "unknown dtype '%s'; valid: float16 (fp16, half), "
                         "bfloat16 (bf16), float32 (fp32), float64, int8, uint8, "
                         "int16, int32, int64, bool",
                         v.v[i]);
      break;
    }
    *mask |= ZLB_DT_BIT(d);
  }
  if (!rc && !*mask)
    rc = zlb_error_set(err, ZLB_EINVAL, "empty dtype list '%s'", csv);
  zlb_strvec_release(&v);
  return rc;
}

void zlb_dtype_mask_format(uint32_t mask, zlb_strbuf_t *out) {
  int first = 1;
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if (mask & ZLB_DT_BIT(d)) {
      zlb_strbuf_addf(out, "%s%s", first ? "" : ",", zlb_dtype_name((zlb_dtype_t)d));
      first = 0;
    }
}
