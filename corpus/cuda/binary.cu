/* Binary (add, sub, mul, div, pow, maximum) and ternary (where, addcmul)
 * pointwise operators: one functor each over pointwise.cuh. Inputs have the
 * same extents (no broadcasting). */
#include "pointwise.cuh"

namespace zlbc {
namespace {

/* Input fills: normal(0,1) unless an operator's math needs a range. */
struct Fill {
  zlb_fill_t kind;
  double lo, hi;
};
constexpr Fill kNormal = {ZLB_FILL_NORMAL, 0.0, 1.0};

struct Add {
  static constexpr const char *kName = "add";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Sub {
  static constexpr const char *kName = "sub";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  __device__ float operator()(float a, float b) const { return a - b; }
};
struct Mul {
  static constexpr const char *kName = "mul";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  __device__ float operator()(float a, float b) const { return a * b; }
};
struct Div { /* divisor away from zero so float16 cannot overflow */
  static constexpr const char *kName = "div";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, {ZLB_FILL_UNIFORM, 0.5, 2.0}};
  __device__ float operator()(float a, float b) const { return a / b; }
};
struct Pow { /* base in [0.5, 2), exponent in [-4, 4): results within [1/16, 16] */
  static constexpr const char *kName = "pow";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {{ZLB_FILL_UNIFORM, 0.5, 2.0}, {ZLB_FILL_UNIFORM, -4.0, 4.0}};
  __device__ float operator()(float a, float b) const { return powf(a, b); }
};
struct Maximum {
  static constexpr const char *kName = "maximum";
  static constexpr double kFlops = 1;
  static constexpr Fill kFill[2] = {kNormal, kNormal};
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <typename F> struct Binary {
  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    PwIo io{};
    io.nin = 2;
    for (int i = 0; i < 2; i++) {
      io.in_dt[i] = c->dtype;
      io.fill[i] = F::kFill[i].kind;
      io.lo[i] = F::kFill[i].lo;
      io.hi[i] = F::kFill[i].hi;
    }
    io.out_dt = c->dtype;
    io.flops_per_elem = F::kFlops;
    return pw_case_init(env, c, F::kName, io);
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      PwArgs<2, T, T, T, T, F> p{static_cast<T *>(c->out[which][0].data),
                                 static_cast<const T *>(c->in[0].data),
                                 static_cast<const T *>(c->in[1].data), nullptr,
                                 numel_of(&c->out[which][0]), F{}};
      return pw_launch(env, which, as_stream(stream), p);
    });
  }
};

/* where(cond, a, b): cond is bool (true with probability 0.5). */
struct Where {
  __device__ float operator()(float cond, float a, float b) const { return cond != 0.0f ? a : b; }
};
/* addcmul(x, t1, t2, value=0.5) = x + 0.5 * t1 * t2 */
struct Addcmul {
  __device__ float operator()(float x, float t1, float t2) const { return x + 0.5f * t1 * t2; }
};

template <typename F, bool WHERE> struct Ternary {
  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    PwIo io{};
    io.nin = 3;
    for (int i = 0; i < 3; i++) {
      io.in_dt[i] = c->dtype;
      io.fill[i] = ZLB_FILL_NORMAL;
      io.lo[i] = 0.0;
      io.hi[i] = 1.0;
    }
    if (WHERE) {
      io.in_dt[0] = ZLB_DT_BOOL;
      io.fill[0] = ZLB_FILL_BOOL;
      io.lo[0] = 0.5;
    }
    io.out_dt = c->dtype;
    io.flops_per_elem = WHERE ? 1 : 3;
    return pw_case_init(env, c, WHERE ? "where" : "addcmul", io);
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using T0 = typename std::conditional<WHERE, uint8_t, T>::type;
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
          &Binary<F>::case_init, nullptr, ZLBC_IMPL("ref", 0, nullptr, &Binary<F>::enqueue), \
          ZLBC_IMPL("zlb", 0, nullptr, &Binary<F>::enqueue))

#define TERNARY_OP(NAME, F, WHERE, DOC)                                                       \
  ZLBC_OP(NAME, "ternary_pointwise", ZLB_DT_FLOATS, "tensor extents (all inputs)", DOC,      \
          (&Ternary<F, WHERE>::case_init), nullptr,                                           \
          ZLBC_IMPL("ref", 0, nullptr, (&Ternary<F, WHERE>::enqueue)),                       \
          ZLBC_IMPL("zlb", 0, nullptr, (&Ternary<F, WHERE>::enqueue)))

const zlb_op_t kBinaryOps[] = {
    BINARY_OP(Add, "a + b"),
    BINARY_OP(Sub, "a - b"),
    BINARY_OP(Mul, "a * b"),
    BINARY_OP(Div, "a / b; b uniform in [0.5, 2)"),
    BINARY_OP(Pow, "a ** b; a uniform in [0.5, 2), b uniform in [-4, 4)"),
    BINARY_OP(Maximum, "elementwise max(a, b)"),
    TERNARY_OP("where", Where, true, "where(cond, a, b); cond bool, true with probability 0.5"),
    TERNARY_OP("addcmul", Addcmul, false, "x + 0.5 * t1 * t2"),
};

} // namespace
} // namespace zlbc

int zlbc_register_binary(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kBinaryOps, sizeof zlbc::kBinaryOps / sizeof zlbc::kBinaryOps[0]);
}
