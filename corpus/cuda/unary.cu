/* Unary pointwise operators (family unary_pointwise): one functor each over
 * pointwise.cuh. Baseline: cub::DeviceTransform; candidate: 16-byte vectors. */
#include "pointwise.cuh"

namespace zlbc {
namespace {

/* Input/output dtypes: the case dtype, or float32 on one side (casts). */
enum UnaryIo { IO_SAME, IO_TO_FP32, IO_FROM_FP32 };

struct Abs {
  static constexpr const char *kName = "abs";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return fabsf(x); }
};
struct Neg {
  static constexpr const char *kName = "neg";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return -x; }
};
struct Exp {
  static constexpr const char *kName = "exp";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return expf(x); }
};
struct Log {
  static constexpr const char *kName = "log";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return logf(x); }
};
struct Sqrt {
  static constexpr const char *kName = "sqrt";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return sqrtf(x); }
};
struct Rsqrt {
  static constexpr const char *kName = "rsqrt";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return 1.0f / sqrtf(x); }
};
struct Relu {
  static constexpr const char *kName = "relu";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return x > 0.0f ? x : 0.0f; }
};
struct Gelu { /* exact: x * Phi(x) */
  static constexpr const char *kName = "gelu";
  static constexpr double kFlops = 5;
  ZLBC_HD float operator()(float x) const {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  }
};
struct GeluTanh { /* approximate='tanh' */
  static constexpr const char *kName = "gelu_tanh";
  static constexpr double kFlops = 9;
  ZLBC_HD float operator()(float x) const {
    float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
  }
};
struct Silu {
  static constexpr const char *kName = "silu";
  static constexpr double kFlops = 3;
  ZLBC_HD float operator()(float x) const { return x / (1.0f + expf(-x)); }
};
struct Sigmoid {
  static constexpr const char *kName = "sigmoid";
  static constexpr double kFlops = 3;
  ZLBC_HD float operator()(float x) const { return 1.0f / (1.0f + expf(-x)); }
};
struct Tanh {
  static constexpr const char *kName = "tanh";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return tanhf(x); }
};
struct Sin {
  static constexpr const char *kName = "sin";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return sinf(x); }
};
struct Cos {
  static constexpr const char *kName = "cos";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return cosf(x); }
};
struct Erf {
  static constexpr const char *kName = "erf";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return erff(x); }
};
struct Exp2 {
  static constexpr const char *kName = "exp2";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return exp2f(x); }
};
struct Log2 {
  static constexpr const char *kName = "log2";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return log2f(x); }
};
struct Log1p {
  static constexpr const char *kName = "log1p";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return log1pf(x); }
};
struct Expm1 {
  static constexpr const char *kName = "expm1";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return expm1f(x); }
};
struct Reciprocal {
  static constexpr const char *kName = "reciprocal";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return 1.0f / x; }
};
struct Floor {
  static constexpr const char *kName = "floor";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return floorf(x); }
};
struct Ceil {
  static constexpr const char *kName = "ceil";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return ceilf(x); }
};
struct Hardsigmoid { /* clamp(x / 6 + 1/2, 0, 1) */
  static constexpr const char *kName = "hardsigmoid";
  static constexpr double kFlops = 3;
  ZLBC_HD float operator()(float x) const {
    return fminf(fmaxf(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
  }
};
struct Hardswish { /* x * hardsigmoid(x) */
  static constexpr const char *kName = "hardswish";
  static constexpr double kFlops = 4;
  ZLBC_HD float operator()(float x) const {
    return x * fminf(fmaxf(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
  }
};
struct Mish { /* x * tanh(softplus(x)) */
  static constexpr const char *kName = "mish";
  static constexpr double kFlops = 4;
  ZLBC_HD float operator()(float x) const { return x * tanhf(log1pf(expf(x))); }
};
struct Elu { /* alpha = 1 */
  static constexpr const char *kName = "elu";
  static constexpr double kFlops = 2;
  ZLBC_HD float operator()(float x) const { return x > 0.0f ? x : expm1f(x); }
};
struct LeakyRelu { /* negative_slope = 0.01 */
  static constexpr const char *kName = "leaky_relu";
  static constexpr double kFlops = 1;
  ZLBC_HD float operator()(float x) const { return x > 0.0f ? x : 0.01f * x; }
};
struct Clamp { /* clamp(x, min=-0.5, max=0.5) */
  static constexpr const char *kName = "clamp";
  static constexpr double kFlops = 2;
  ZLBC_HD float operator()(float x) const { return fminf(fmaxf(x, -0.5f), 0.5f); }
};
struct CastToFp32 {
  static constexpr const char *kName = "cast_to_fp32";
  static constexpr double kFlops = 0;
  ZLBC_HD float operator()(float x) const { return x; }
};
struct CastFromFp32 {
  static constexpr const char *kName = "cast_from_fp32";
  static constexpr double kFlops = 0;
  ZLBC_HD float operator()(float x) const { return x; }
};

template <typename T, int IO> struct InOf { using type = T; };
template <typename T> struct InOf<T, IO_FROM_FP32> { using type = float; };
template <typename T, int IO> struct OutOf { using type = T; };
template <typename T> struct OutOf<T, IO_TO_FP32> { using type = float; };

/* POSITIVE: inputs uniform in [0.1, 10) (log, sqrt, rsqrt); else normal(0, 1). */
template <typename F, int IO, bool POSITIVE> struct Unary {
  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    if (IO != IO_SAME && c->dtype == ZLB_DT_FLOAT32)
      return errf(env, ZLB_EINVAL, "%s: float16 or bfloat16 only (float32 is the other side)",
                  F::kName);
    PwIo io{};
    io.nin = 1;
    io.in_dt[0] = IO == IO_FROM_FP32 ? ZLB_DT_FLOAT32 : c->dtype;
    io.fill[0] = POSITIVE ? ZLB_FILL_UNIFORM : ZLB_FILL_NORMAL;
    io.lo[0] = POSITIVE ? 0.1 : 0.0;
    io.hi[0] = POSITIVE ? 10.0 : 1.0;
    io.out_dt = IO == IO_TO_FP32 ? ZLB_DT_FLOAT32 : c->dtype;
    io.flops_per_elem = F::kFlops;
    return pw_case_init(env, c, F::kName, io);
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    if (which != ZLB_BASELINE)
      return 0;
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using TI = typename InOf<T, IO>::type;
      using TO = typename OutOf<T, IO>::type;
      return pw_prime<1, TO, TI, TI, TI, F>(env);
    });
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using TI = typename InOf<T, IO>::type;
      using TO = typename OutOf<T, IO>::type;
      PwArgs<1, TO, TI, TI, TI, F> p{static_cast<TO *>(c->out[which][0].data),
                                     static_cast<const TI *>(c->in[0].data), nullptr, nullptr,
                                     numel_of(&c->out[which][0]), F{}};
      return pw_launch(env, which, as_stream(stream), p);
    });
  }
};

#define UNARY_OP(F, IO, POS, DTYPES, DOC)                                                     \
  ZLBC_OP(F::kName, "unary_pointwise", DTYPES, "tensor extents", DOC,                        \
          (&Unary<F, IO, POS>::case_init), nullptr,                                           \
          ZLBC_IMPL(ZLBC_PW_BASELINE, 0, (&Unary<F, IO, POS>::prepare),                       \
                    (&Unary<F, IO, POS>::enqueue)),                                           \
          ZLBC_IMPL("zlb", 0, nullptr, (&Unary<F, IO, POS>::enqueue)))

const uint32_t kHalfs = ZLB_DT_BIT(ZLB_DT_FLOAT16) | ZLB_DT_BIT(ZLB_DT_BFLOAT16);

const zlb_op_t kUnaryOps[] = {
    UNARY_OP(Abs, IO_SAME, false, ZLB_DT_FLOATS, "|x|"),
    UNARY_OP(Neg, IO_SAME, false, ZLB_DT_FLOATS, "-x"),
    UNARY_OP(Exp, IO_SAME, false, ZLB_DT_FLOATS, "e^x"),
    UNARY_OP(Log, IO_SAME, true, ZLB_DT_FLOATS, "natural log; x uniform in [0.1, 10)"),
    UNARY_OP(Sqrt, IO_SAME, true, ZLB_DT_FLOATS, "square root; x uniform in [0.1, 10)"),
    UNARY_OP(Rsqrt, IO_SAME, true, ZLB_DT_FLOATS, "1/sqrt(x); x uniform in [0.1, 10)"),
    UNARY_OP(Relu, IO_SAME, false, ZLB_DT_FLOATS, "max(x, 0)"),
    UNARY_OP(Gelu, IO_SAME, false, ZLB_DT_FLOATS, "gelu, exact (erf) form"),
    UNARY_OP(GeluTanh, IO_SAME, false, ZLB_DT_FLOATS, "gelu, tanh approximation"),
    UNARY_OP(Silu, IO_SAME, false, ZLB_DT_FLOATS, "x * sigmoid(x)"),
    UNARY_OP(Sigmoid, IO_SAME, false, ZLB_DT_FLOATS, "1 / (1 + e^-x)"),
    UNARY_OP(Tanh, IO_SAME, false, ZLB_DT_FLOATS, "tanh(x)"),
    UNARY_OP(Sin, IO_SAME, false, ZLB_DT_FLOATS, "sin(x)"),
    UNARY_OP(Cos, IO_SAME, false, ZLB_DT_FLOATS, "cos(x)"),
    UNARY_OP(Erf, IO_SAME, false, ZLB_DT_FLOATS, "erf(x)"),
    UNARY_OP(Exp2, IO_SAME, false, ZLB_DT_FLOATS, "2^x"),
    UNARY_OP(Log2, IO_SAME, true, ZLB_DT_FLOATS, "base-2 log; x uniform in [0.1, 10)"),
    UNARY_OP(Log1p, IO_SAME, true, ZLB_DT_FLOATS, "log(1 + x); x uniform in [0.1, 10)"),
    UNARY_OP(Expm1, IO_SAME, false, ZLB_DT_FLOATS, "e^x - 1"),
    UNARY_OP(Reciprocal, IO_SAME, true, ZLB_DT_FLOATS, "1/x; x uniform in [0.1, 10)"),
    UNARY_OP(Floor, IO_SAME, false, ZLB_DT_FLOATS, "floor(x)"),
    UNARY_OP(Ceil, IO_SAME, false, ZLB_DT_FLOATS, "ceil(x)"),
    UNARY_OP(Hardsigmoid, IO_SAME, false, ZLB_DT_FLOATS, "clamp(x / 6 + 1/2, 0, 1)"),
    UNARY_OP(Hardswish, IO_SAME, false, ZLB_DT_FLOATS, "x * hardsigmoid(x)"),
    UNARY_OP(Mish, IO_SAME, false, ZLB_DT_FLOATS, "x * tanh(softplus(x))"),
    UNARY_OP(Elu, IO_SAME, false, ZLB_DT_FLOATS, "x if x > 0 else e^x - 1 (alpha 1)"),
    UNARY_OP(LeakyRelu, IO_SAME, false, ZLB_DT_FLOATS, "x if x > 0 else 0.01 x"),
    UNARY_OP(Clamp, IO_SAME, false, ZLB_DT_FLOATS, "clamp(x, min=-0.5, max=0.5)"),
    UNARY_OP(CastToFp32, IO_TO_FP32, false, kHalfs,
             "cast: the case dtype (float16/bfloat16) in, float32 out"),
    UNARY_OP(CastFromFp32, IO_FROM_FP32, false, kHalfs,
             "cast: float32 in, the case dtype (float16/bfloat16) out, round to nearest even"),
};

} // namespace
} // namespace zlbc

int zlbc_register_unary(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kUnaryOps, sizeof zlbc::kUnaryOps / sizeof zlbc::kUnaryOps[0]);
}
