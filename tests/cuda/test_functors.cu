/* The pointwise operators' math, on the host: each functor of unary.cu and
 * binary.cu against an independent double-precision reference. On the GPU
 * the candidate and its CUB baseline share the functor, so their
 * comparison cannot catch a wrong one; this can (no GPU needed). */
#include <math.h>
#include <stdio.h>

#include "unary.cu"
#include "binary.cu"

static int failures;

static void check(const char *op, double got, double want, double x, double y) {
  double tol = 1e-5 * fabs(want) + 1e-6;
  if (!(fabs(got - want) <= tol)) {
    fprintf(stderr, "FAIL: %s(%g, %g) = %.9g, expected %.9g\n", op, x, y, got, want);
    failures++;
  }
}

template <typename F> static void unary(const char *op, double (*ref)(double), bool positive) {
  static const double any[] = {-3.7, -3.0, -1.0, -0.5, -1e-3, 0.0, 0.25, 1.0, 2.5, 3.0, 6.5};
  static const double pos[] = {0.1, 0.5, 1.0, 3.0, 9.9};
  const double *xs = positive ? pos : any;
  int n = positive ? 5 : 11;
  for (int i = 0; i < n; i++)
    check(op, F{}((float)xs[i]), ref(xs[i]), xs[i], 0);
}

template <typename F> static void binary(const char *op, double (*ref)(double, double),
                                         bool b_positive) {
  static const double as[] = {-2.5, -1.0, 0.0, 0.75, 1.5, 3.0};
  static const double bs[] = {-1.25, -0.5, 0.5, 1.0, 1.75};
  static const double bpos[] = {0.5, 0.8, 1.0, 1.9};
  for (double a : as)
    for (int j = 0; j < (b_positive ? 4 : 5); j++) {
      double b = b_positive ? bpos[j] : bs[j];
      check(op, F{}((float)a, (float)b), ref(a, b), a, b);
    }
}

template <typename F> static void ternary(const char *op, double (*ref)(double, double, double)) {
  static const double v[] = {-1.5, 0.0, 0.5, 2.0};
  for (double a : v)
    for (double b : v)
      for (double c : {0.5, 0.75, 1.0, 1.5})
        check(op, F{}((float)a, (float)b, (float)c), ref(a, b, c), a, b);
}

static double relu6(double x) { return fmin(fmax(x, 0.0), 6.0); }

int main() {
  using namespace zlbc;
  unary<Abs>("abs", [](double x) { return fabs(x); }, false);
  unary<Neg>("neg", [](double x) { return -x; }, false);
  unary<Exp>("exp", [](double x) { return exp(x); }, false);
  unary<Log>("log", [](double x) { return log(x); }, true);
  unary<Sqrt>("sqrt", [](double x) { return sqrt(x); }, true);
  unary<Rsqrt>("rsqrt", [](double x) { return 1.0 / sqrt(x); }, true);
  unary<Relu>("relu", [](double x) { return x > 0 ? x : 0.0; }, false);
  unary<Gelu>("gelu", [](double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }, false);
  unary<GeluTanh>("gelu_tanh", [](double x) {
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  }, false);
  unary<Silu>("silu", [](double x) { return x / (1.0 + exp(-x)); }, false);
  unary<Sigmoid>("sigmoid", [](double x) { return 1.0 / (1.0 + exp(-x)); }, false);
  unary<Tanh>("tanh", [](double x) { return tanh(x); }, false);
  unary<Sin>("sin", [](double x) { return sin(x); }, false);
  unary<Cos>("cos", [](double x) { return cos(x); }, false);
  unary<Erf>("erf", [](double x) { return erf(x); }, false);
  unary<Exp2>("exp2", [](double x) { return exp2(x); }, false);
  unary<Log2>("log2", [](double x) { return log2(x); }, true);
  unary<Log1p>("log1p", [](double x) { return log1p(x); }, true);
  unary<Expm1>("expm1", [](double x) { return expm1(x); }, false);
  unary<Reciprocal>("reciprocal", [](double x) { return 1.0 / x; }, true);
  unary<Floor>("floor", [](double x) { return floor(x); }, false);
  unary<Ceil>("ceil", [](double x) { return ceil(x); }, false);
  /* torch's definitions: relu6(x + 3) / 6, and x times it */
  unary<Hardsigmoid>("hardsigmoid", [](double x) { return relu6(x + 3.0) / 6.0; }, false);
  unary<Hardswish>("hardswish", [](double x) { return x * relu6(x + 3.0) / 6.0; }, false);
  unary<Mish>("mish", [](double x) { return x * tanh(log1p(exp(x))); }, false);
  unary<Elu>("elu", [](double x) { return x > 0 ? x : exp(x) - 1.0; }, false);
  unary<LeakyRelu>("leaky_relu", [](double x) { return x > 0 ? x : 0.01 * x; }, false);
  unary<Clamp>("clamp", [](double x) { return fmin(fmax(x, -0.5), 0.5); }, false);

  binary<Add>("add", [](double a, double b) { return a + b; }, false);
  binary<Sub>("sub", [](double a, double b) { return a - b; }, false);
  binary<Mul>("mul", [](double a, double b) { return a * b; }, false);
  binary<Div>("div", [](double a, double b) { return a / b; }, true);
  for (double a : {0.5, 1.0, 1.7})
    for (double b : {-3.0, -0.5, 0.0, 2.5})
      check("pow", Pow{}((float)a, (float)b), pow(a, b), a, b);
  binary<Maximum>("maximum", [](double a, double b) { return fmax(a, b); }, false);
  binary<Minimum>("minimum", [](double a, double b) { return fmin(a, b); }, false);
  binary<Atan2>("atan2", [](double a, double b) { return atan2(a, b); }, false);
  binary<Hypot>("hypot", [](double a, double b) { return hypot(a, b); }, false);
  binary<Logaddexp>("logaddexp", [](double a, double b) { return log(exp(a) + exp(b)); }, false);
  /* Python's %: the result has the sign of b */
  binary<Remainder>("remainder", [](double a, double b) { return a - floor(a / b) * b; }, false);
  binary<Eq>("eq", [](double a, double b) { return a == b ? 1.0 : 0.0; }, false);
  binary<Ne>("ne", [](double a, double b) { return a != b ? 1.0 : 0.0; }, false);
  binary<Gt>("gt", [](double a, double b) { return a > b ? 1.0 : 0.0; }, false);
  binary<Ge>("ge", [](double a, double b) { return a >= b ? 1.0 : 0.0; }, false);
  binary<Lt>("lt", [](double a, double b) { return a < b ? 1.0 : 0.0; }, false);
  binary<Le>("le", [](double a, double b) { return a <= b ? 1.0 : 0.0; }, false);

  ternary<Where>("where", [](double c, double a, double b) { return c != 0 ? a : b; });
  ternary<Addcmul>("addcmul", [](double x, double t1, double t2) { return x + 0.5 * t1 * t2; });
  ternary<Addcdiv>("addcdiv", [](double x, double t1, double t2) { return x + 0.5 * t1 / t2; });
  ternary<Lerp>("lerp", [](double a, double b, double w) { return a + w * (b - a); });

  if (failures) {
    fprintf(stderr, "%d functor values wrong\n", failures);
    return 1;
  }
  printf("ok: the pointwise functors against their references\n");
  return 0;
}
