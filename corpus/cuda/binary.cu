/* Binary (add ... remainder), comparison (eq ... le, bool out) and ternary
 * (where, addcmul, addcdiv, lerp) pointwise operators: one functor each over
 * pointwise.cuh (baseline cub::DeviceTransform, candidate 16-byte vectors).
 * Inputs have the same extents (no broadcasting). */
#include "pointwise.cuh"

namespace zlbc {
namespace {

/* Input fills: normal(0,1) unless an operator's math needs a range. */
struct Fill {
  zlb_fill_t kind;
  double lo, hi;
};
constexpr Fill kNormal = {ZLB_FILL_NORMAL, 0.0, 1.0};
/* Small integers, so that comparisons are often equal: [0, 4). */
constexpr Fill kSmallInt = {ZLB_FILL_INT, 0.0, 4.0};

struct Add {
  static constexpr const char *kName = "add";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  ZLBC_HD float operator()(float a, float b) const { return a + b; }
};
struct Sub {
  static constexpr const char *kName = "sub";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  ZLBC_HD float operator()(float a, float b) const { return a - b; }
};
struct Mul {
  static constexpr const char *kName = "mul";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  ZLBC_HD float operator()(float a, float b) const { return a * b; }
};
struct Div { /* divisor away from zero so float16 cannot overflow */
  static constexpr const char *kName = "div";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, {ZLB_FILL_UNIFORM, 0.5, 2.0}};
  ZLBC_HD float operator()(float a, float b) const { return a / b; }
};
struct Pow { /* base in [0.5, 2), exponent in [-4, 4): results within [1/16, 16] */
  static constexpr const char *kName = "pow";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {{ZLB_FILL_UNIFORM, 0.5, 2.0}, {ZLB_FILL_UNIFORM, -4.0, 4.0}};
  ZLBC_HD float operator()(float a, float b) const { return powf(a, b); }
};
struct Maximum {
  static constexpr const char *kName = "maximum";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  ZLBC_HD float operator()(float a, float b) const { return fmaxf(a, b); }
};

struct Minimum {
  static constexpr const char *kName = "minimum";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  ZLBC_HD float operator()(float a, float b) const { return fminf(a, b); }
};
struct Atan2 {
  static constexpr const char *kName = "atan2";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  ZLBC_HD float operator()(float a, float b) const { return atan2f(a, b); }
};
struct Hypot {
  static constexpr const char *kName = "hypot";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  ZLBC_HD float operator()(float a, float b) const { return hypotf(a, b); }
};
struct Logaddexp { /* log(e^a + e^b), without overflow */
  static constexpr const char *kName = "logaddexp";
  static constexpr double kFlops = 4;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  ZLBC_HD float operator()(float a, float b) const {
    return fmaxf(a, b) + log1pf(expf(-fabsf(a - b)));
  }
};
struct Remainder { /* Python's a % b: the sign of b; b in [0.5, 2) */
  static constexpr const char *kName = "remainder";
  static constexpr double kFlops = 3;
  static constexpr Fill kFill[2] = {kNormal, {ZLB_FILL_UNIFORM, 0.5, 2.0}};
  ZLBC_HD float operator()(float a, float b) const {
    float r = fmodf(a, b);
    return r != 0.0f && ((r < 0.0f) != (b < 0.0f)) ? r + b : r;
  }
};

/* Comparisons: bool out (1.0 or 0.0 in float, stored as one byte). */
#define ZLBC_COMPARE(STRUCT, NAME, EXPR)                                         \
  struct STRUCT {                                                               \
    static constexpr const char *kName = NAME;                                  \
    static constexpr double kFlops = 1;                                         \
    static constexpr Fill kFill[2] = {kSmallInt, kSmallInt};                    \
    ZLBC_HD float operator()(float a, float b) const { return (EXPR) ? 1.0f : 0.0f; } \
  };
ZLBC_COMPARE(Eq, "eq", a == b)
ZLBC_COMPARE(Ne, "ne", a != b)
ZLBC_COMPARE(Gt, "gt", a > b)
ZLBC_COMPARE(Ge, "ge", a >= b)
ZLBC_COMPARE(Lt, "lt", a < b)
ZLBC_COMPARE(Le, "le", a <= b)
#undef ZLBC_COMPARE

/* BOOL_OUT: the output is bool (comparisons), checked exactly. */
template <typename F, bool BOOL_OUT = false> struct Binary {
  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    PwIo io{};
    io.nin = 2;
    for (int i = 0; i < 2; i++) {
      io.in_dt[i] = c->dtype;
      io.fill[i] = F::kFill[i].kind;
      io.lo[i] = F::kFill[i].lo;
      io.hi[i] = F::kFill[i].hi;
    }
    io.out_dt = BOOL_OUT ? ZLB_DT_BOOL : c->dtype;
    io.flops_per_elem = F::kFlops;
    ZLBC_TRY(pw_case_init(env, c, F::kName, io));
    if (BOOL_OUT)
      c->check = ZLB_CHECK_EXACT;
    return 0;
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    if (which != ZLB_BASELINE)
      return 0;
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using TO = typename std::conditional<BOOL_OUT, uint8_t, T>::type;
      return pw_prime<2, TO, T, T, T, F>(env);
    });
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using TO = typename std::conditional<BOOL_OUT, uint8_t, T>::type;
      PwArgs<2, TO, T, T, T, F> p{static_cast<TO *>(c->out[which][0].data),
                                  static_cast<const T *>(c->in[0].data),
                                  static_cast<const T *>(c->in[1].data), nullptr,
                                  numel_of(&c->out[which][0]), F{}};
      return pw_launch(env, which, as_stream(stream), p);
    });
  }
};

/* where(cond, a, b): cond is bool (true with probability 0.5). */
struct Where {
  static constexpr const char *kName = "where";
  static constexpr double kFlops = 1;
  static constexpr bool kBoolFirst = true;
  static constexpr Fill kFill[3] = {{ZLB_FILL_BOOL, 0.5, 1.0}, kNormal, kNormal};
  ZLBC_HD float operator()(float cond, float a, float b) const { return cond != 0.0f ? a : b; }
};
/* addcmul(x, t1, t2, value=0.5) = x + 0.5 * t1 * t2 */
struct Addcmul {
  static constexpr const char *kName = "addcmul";
  static constexpr double kFlops = 3;
  static constexpr bool kBoolFirst = false;
  static constexpr Fill kFill[3] = {kNormal, kNormal, kNormal};
  ZLBC_HD float operator()(float x, float t1, float t2) const { return x + 0.5f * t1 * t2; }
};
/* addcdiv(x, t1, t2, value=0.5) = x + 0.5 * t1 / t2; t2 in [0.5, 2) */
struct Addcdiv {
  static constexpr const char *kName = "addcdiv";
  static constexpr double kFlops = 3;
  static constexpr bool kBoolFirst = false;
  static constexpr Fill kFill[3] = {kNormal, kNormal, {ZLB_FILL_UNIFORM, 0.5, 2.0}};
  ZLBC_HD float operator()(float x, float t1, float t2) const { return x + 0.5f * t1 / t2; }
};
/* lerp(start, end, weight) = start + weight * (end - start); weight in [0, 1) */
struct Lerp {
  static constexpr const char *kName = "lerp";
  static constexpr double kFlops = 3;
  static constexpr bool kBoolFirst = false;
  static constexpr Fill kFill[3] = {kNormal, kNormal, {ZLB_FILL_UNIFORM, 0.0, 1.0}};
  ZLBC_HD float operator()(float a, float b, float w) const { return a + w * (b - a); }
};

template <typename F> struct Ternary {
  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    PwIo io{};
    io.nin = 3;
    for (int i = 0; i < 3; i++) {
      io.in_dt[i] = c->dtype;
      io.fill[i] = F::kFill[i].kind;
      io.lo[i] = F::kFill[i].lo;
      io.hi[i] = F::kFill[i].hi;
    }
    if (F::kBoolFirst)
      io.in_dt[0] = ZLB_DT_BOOL;
    io.out_dt = c->dtype;
    io.flops_per_elem = F::kFlops;
    return pw_case_init(env, c, F::kName, io);
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    if (which != ZLB_BASELINE)
      return 0;
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using T0 = typename std::conditional<F::kBoolFirst, uint8_t, T>::type;
      return pw_prime<3, T, T0, T, T, F>(env);
    });
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using T0 = typename std::conditional<F::kBoolFirst, uint8_t, T>::type;
      PwArgs<3, T, T0, T, T, F> p{static_cast<T *>(c->out[which][0].data),
                                  static_cast<const T0 *>(c->in[0].data),
                                  static_cast<const T *>(c->in[1].data),
                                  static_cast<const T *>(c->in[2].data),
                                  numel_of(&c->out[which][0]), F{}};
      return pw_launch(env, which, as_stream(stream), p);
    });
  }
};

#define BINARY_OP(F, DOC)                                                                   \
  ZLBC_OP(F::kName, "binary_pointwise", ZLB_DT_FLOATS, "tensor extents (both inputs)", DOC, \
          &Binary<F>::case_init, nullptr,                                                    \
          ZLBC_IMPL(ZLBC_PW_BASELINE, 0, &Binary<F>::prepare, &Binary<F>::enqueue),          \
          ZLBC_IMPL("zlb", 0, nullptr, &Binary<F>::enqueue))

#define COMPARE_OP(F, DOC)                                                                  \
  ZLBC_OP(F::kName, "binary_pointwise", ZLB_DT_FLOATS, "tensor extents (both inputs)", DOC, \
          (&Binary<F, true>::case_init), nullptr,                                            \
          ZLBC_IMPL(ZLBC_PW_BASELINE, 0, (&Binary<F, true>::prepare),                        \
                    (&Binary<F, true>::enqueue)),                                             \
          ZLBC_IMPL("zlb", 0, nullptr, (&Binary<F, true>::enqueue)))

#define TERNARY_OP(F, DOC)                                                                  \
  ZLBC_OP(F::kName, "ternary_pointwise", ZLB_DT_FLOATS, "tensor extents (all inputs)", DOC, \
          &Ternary<F>::case_init, nullptr,                                                   \
          ZLBC_IMPL(ZLBC_PW_BASELINE, 0, &Ternary<F>::prepare, &Ternary<F>::enqueue),        \
          ZLBC_IMPL("zlb", 0, nullptr, &Ternary<F>::enqueue))

const zlb_op_t kBinaryOps[] = {
    BINARY_OP(Add, "a + b"),
    BINARY_OP(Sub, "a - b"),
    BINARY_OP(Mul, "a * b"),
    BINARY_OP(Div, "a / b; b uniform in [0.5, 2)"),
    BINARY_OP(Pow, "a ** b; a uniform in [0.5, 2), b uniform in [-4, 4)"),
    BINARY_OP(Maximum, "elementwise max(a, b)"),
    BINARY_OP(Minimum, "elementwise min(a, b)"),
    BINARY_OP(Atan2, "atan2(a, b)"),
    BINARY_OP(Hypot, "sqrt(a^2 + b^2)"),
    BINARY_OP(Logaddexp, "log(e^a + e^b)"),
    BINARY_OP(Remainder, "a % b with the sign of b (Python's); b uniform in [0.5, 2)"),
    COMPARE_OP(Eq, "a == b, bool out; a, b integers in [0, 4)"),
    COMPARE_OP(Ne, "a != b, bool out; a, b integers in [0, 4)"),
    COMPARE_OP(Gt, "a > b, bool out; a, b integers in [0, 4)"),
    COMPARE_OP(Ge, "a >= b, bool out; a, b integers in [0, 4)"),
    COMPARE_OP(Lt, "a < b, bool out; a, b integers in [0, 4)"),
    COMPARE_OP(Le, "a <= b, bool out; a, b integers in [0, 4)"),
    TERNARY_OP(Where, "where(cond, a, b); cond bool, true with probability 0.5"),
    TERNARY_OP(Addcmul, "x + 0.5 * t1 * t2"),
    TERNARY_OP(Addcdiv, "x + 0.5 * t1 / t2; t2 uniform in [0.5, 2)"),
    TERNARY_OP(Lerp, "start + weight * (end - start); weight uniform in [0, 1)"),
};

} // namespace
} // namespace zlbc

int zlbc_register_binary(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kBinaryOps, sizeof zlbc::kBinaryOps / sizeof zlbc::kBinaryOps[0]);
}
