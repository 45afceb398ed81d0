/* Device ceilings (src/run/peaks.c): the cache holds only what was
 * measured, is completed by a later run, is not trusted when malformed,
 * and %Peak uses only the ceiling that applies. The measurements are fake
 * probes, so this runs on any machine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zlb_test.h"
#include "run/run_int.h"

/* The fake device: what each probe returns and how often it was called. */
struct fake {
  double gbps;
  uint32_t gemm_mask;
  const char *gemm_none_why;
  double tflops;              /* every dtype; NAN: the gemm fails */
  int bw_calls, gemm_calls;
};

static double fake_bw(void *ctx, char *why, size_t len) {
  struct fake *f = ctx;
  f->bw_calls++;
  if (isnan(f->gbps))
    snprintf(why, len, "fake copy failed");
  return f->gbps;
}

static uint32_t fake_gemm_dtypes(void *ctx, char *why, size_t len) {
  struct fake *f = ctx;
  if (!f->gemm_mask)
    snprintf(why, len, "%s", f->gemm_none_why);
  return f->gemm_mask;
}

static double fake_gemm(void *ctx, zlb_dtype_t dt, char *why, size_t len) {
  struct fake *f = ctx;
  (void)dt;
  f->gemm_calls++;
  if (isnan(f->tflops))
    snprintf(why, len, "peak gemm failed (13): fake launch failure");
  return f->tflops;
}

/* The cache-bandwidth probe's answer (NAN: it fails) and its calls. */
static double fake_cache_gbps = 9000;
static int cache_calls;

static double fake_cache_bw(void *ctx, char *why, size_t len) {
  (void)ctx;
  cache_calls++;
  if (isnan(fake_cache_gbps))
    snprintf(why, len, "fake cache copy failed");
  return fake_cache_gbps;
}

static const zlb_device_info_t dev = {.name = "fake gpu", .uuid = "GPU-1234"};

static char dir[256], path[512];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof(dir), "/tmp/zlb-peaks-XXXXXX");
  if (!mkdtemp(dir))
    return -1;
  snprintf(path, sizeof(path), "%s/peaks-fake.json", dir);
  fake_cache_gbps = 9000;
  cache_calls = 0;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(path);
  rmdir(dir);
  return 0;
}

static void write_text(const char *p, const char *text) {
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *p) {
  char *text = NULL;
  assert_int_equal(zlb_read_file(p, &text, NULL, NULL), 0);
  return text;
}

static void resolve(zlb__peaks_t *p, struct fake *f) {
  zlb__peaks_probe_t probe = {f, fake_bw, fake_gemm_dtypes, fake_gemm, fake_cache_bw};
  zlb__peaks_resolve_with(p, path, "fake", &dev, &probe);
}

#define F16 ZLB_DT_FLOAT16
/* mm float16 8192^3: 2 N^3 FLOP over 3 N^2 halves. */
#define MM_FLOPS (2.0 * 8192 * 8192 * 8192)
#define MM_BYTES (3.0 * 8192 * 8192 * 2)

/* The field report: a first run without `mm` (only --lib) cached the
 * bandwidth alone; later runs must not judge GEMM rows against it. */
static void test_bandwidth_only_cache(void **state) {
  zlb__peaks_t p;
  zlb_strbuf_t line = ZLB_STRBUF_INIT;
  struct fake f = {4000, 0, "no 'mm' operator for backend 'fake' is loaded", NAN, 0, 0};
  char *text;
  (void)state;
  write_text(path, "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\","
                   " \"measured\": \"2026-01-01T00:00:00Z\", \"bandwidth_gbps\": 4222,"
                   " \"tflops\": {}}\n");
  resolve(&p, &f);
  assert_int_equal(f.bw_calls, 0); /* the cached bandwidth is used */
  assert_true(p.gbps == 4222);
  assert_true(isnan(p.tflops[F16]));
  /* A FLOP-bound row has no ceiling to be judged by: N/A. */
  assert_true(isnan(zlb__peaks_pct_of(&p, F16, MM_BYTES, MM_FLOPS, 7.2)));
  /* A memory-bound row still gets its bandwidth %: 2 GB in 1 ms of 4222 GB/s. */
  assert_true(fabs(zlb__peaks_pct_of(&p, F16, 2e9, 1e9 / 2, 1.0) - 2e9 / 4222e9 / 1e-3 * 100) <
              1e-9);
  zlb__peaks_describe(&p, ZLB_DT_BIT(F16), &line);
  assert_str_contains(line.buf, "bandwidth 4222 GB/s");
  assert_str_contains(line.buf, "gemm ceiling missing for float16 (no 'mm' operator");
  assert_str_contains(line.buf, "N/A");
  zlb_strbuf_release(&line);
  /* Nothing new was measured: the cache is as it was, with no stand-in. */
  text = read_text(path);
  assert_str_contains(text, "\"tflops\": {}");
  free(text);
}

static void test_later_run_completes_cache(void **state) {
  zlb__peaks_t p, again;
  struct fake f = {1, ZLB_DT_BIT(F16), "", 764, 0, 0};
  char *text;
  double pct;
  (void)state;
  write_text(path, "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\","
                   " \"measured\": \"2026-01-01T00:00:00Z\", \"bandwidth_gbps\": 4222,"
                   " \"tflops\": {}}\n");
  resolve(&p, &f);
  assert_int_equal(f.bw_calls, 0);
  assert_int_equal(f.gemm_calls, 1);
  assert_true(p.gbps == 4222 && p.tflops[F16] == 764);
  assert_str_contains(p.source, "completed now");
  /* FLOP-bound now: 2 * 8192^3 / 764e12 s = 1.44 ms floor over 7.2 ms. */
  pct = zlb__peaks_pct_of(&p, F16, MM_BYTES, MM_FLOPS, 7.2);
  assert_true(fabs(pct - MM_FLOPS / 764e12 / 7.2e-3 * 100) < 1e-9);
  assert_true(pct > 19 && pct < 21);
  /* The file holds both, merged; the next run measures nothing. */
  text = read_text(path);
  assert_str_contains(text, "\"bandwidth_gbps\": 4222");
  assert_str_contains(text, "\"float16\": 764");
  assert_null(strstr(text, "float32"));
  free(text);
  f.gemm_calls = 0;
  resolve(&again, &f);
  assert_int_equal(f.bw_calls + f.gemm_calls, 0);
  assert_true(again.gbps == 4222 && again.tflops[F16] == 764);
}

static void test_corrupt_cache_rejected(void **state) {
  static const char *const bad[] = {
      /* truncated mid-write */
      "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\", \"bandw",
      /* a zero is not a ceiling */
      "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\","
      " \"measured\": \"x\", \"bandwidth_gbps\": 0, \"tflops\": {}}",
      "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\","
      " \"measured\": \"x\", \"bandwidth_gbps\": 4222, \"tflops\": {\"float16\": -1}}",
      "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\","
      " \"measured\": \"x\", \"bandwidth_gbps\": \"fast\", \"tflops\": {}}",
      "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\","
      " \"measured\": \"x\", \"bandwidth_gbps\": 4222, \"tflops\": {\"float99\": 1}}",
      "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\","
      " \"measured\": \"x\", \"bandwidth_gbps\": 4222, \"cache_bandwidth_gbps\": -5,"
      " \"tflops\": {}}",
      /* another device's */
      "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-9999\","
      " \"measured\": \"x\", \"bandwidth_gbps\": 4222, \"tflops\": {}}",
      "[1, 2]",
      "",
  };
  (void)state;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    zlb__peaks_t p;
    zlb_strbuf_t line = ZLB_STRBUF_INIT;
    struct fake f = {100, ZLB_DT_BIT(F16), "", 50, 0, 0};
    char *text;
    write_text(path, bad[i]);
    resolve(&p, &f);
    /* Re-measured, not trusted. */
    if (f.bw_calls != 1 || f.gemm_calls != 1 || p.gbps != 100 || p.tflops[F16] != 50)
      fail_msg("cache %zu was trusted: '%s'", i, bad[i]);
    assert_str_contains(p.cache_note, path);
    assert_str_contains(p.cache_note, "rejected");
    zlb__peaks_describe(&p, ZLB_DT_BIT(F16), &line);
    assert_str_contains(line.buf, path);
    zlb_strbuf_release(&line);
    /* And replaced by a valid one. */
    text = read_text(path);
    assert_str_contains(text, "\"bandwidth_gbps\": 100");
    assert_str_contains(text, "\"uuid\": \"GPU-1234\"");
    free(text);
  }
}

/* A failing peak GEMM says why, and writes no stand-in. */
static void test_gemm_failure_reported(void **state) {
  zlb__peaks_t p;
  zlb_strbuf_t line = ZLB_STRBUF_INIT;
  struct fake f = {100, ZLB_DT_BIT(F16) | ZLB_DT_BIT(ZLB_DT_FLOAT32), "", NAN, 0, 0};
  char *text;
  (void)state;
  unlink(path);
  resolve(&p, &f);
  assert_int_equal(f.gemm_calls, 2);
  assert_true(isnan(p.tflops[F16]));
  zlb__peaks_describe(&p, ZLB_DT_BIT(F16) | ZLB_DT_BIT(ZLB_DT_FLOAT32), &line);
  assert_str_contains(line.buf, "gemm ceiling missing for float16,float32 (peak gemm failed (13)");
  zlb_strbuf_release(&line);
  text = read_text(path);
  assert_str_contains(text, "\"bandwidth_gbps\": 100");
  assert_null(strstr(text, "float16"));
  free(text);
  /* Nothing measured at all: nothing written. */
  unlink(path);
  f.gbps = NAN;
  fake_cache_gbps = NAN;
  resolve(&p, &f);
  assert_int_equal(access(path, F_OK), -1);
  assert_true(isnan(zlb__peaks_pct_of(&p, F16, 1e9, 0, 1.0)));
}

/* The last cache's ceiling: measured beside memory's, cached, completed in
 * an older cache that lacks it, and the only one a cache row is judged by. */
static void test_cache_ceiling(void **state) {
  zlb__peaks_t p;
  zlb_strbuf_t line = ZLB_STRBUF_INIT;
  struct fake f = {100, 0, "none", NAN, 0, 0};
  char *text;
  (void)state;
  unlink(path);
  resolve(&p, &f);
  assert_int_equal(cache_calls, 1);
  assert_true(p.cache_gbps == 9000 && p.gbps == 100);
  text = read_text(path);
  assert_str_contains(text, "\"cache_bandwidth_gbps\": 9000");
  free(text);
  /* 2 GB in 1 ms: 20 % of a 9000 GB/s cache, 2000 % of 100 GB/s memory. */
  assert_true(fabs(zlb__peaks_pct_ceiling(&p, ZLB__CEIL_CACHE, F16, 2e9, 0, 1.0) -
                   2e9 / 9000e9 / 1e-3 * 100) < 1e-9);
  assert_true(fabs(zlb__peaks_pct_ceiling(&p, ZLB__CEIL_MEMORY, F16, 2e9, 0, 1.0) - 2000) < 1e-9);
  assert_true(zlb__peaks_pct_of(&p, F16, 2e9, 0, 1.0) ==
              zlb__peaks_pct_ceiling(&p, ZLB__CEIL_MEMORY, F16, 2e9, 0, 1.0));
  zlb__peaks_describe(&p, 0, &line);
  assert_str_contains(line.buf, "cache bandwidth 9000 GB/s");
  zlb_strbuf_reset(&line);
  /* A cache written before the cache ceiling existed is completed: only
   * the cache copy runs. */
  write_text(path, "{\"backend\": \"fake\", \"name\": \"fake gpu\", \"uuid\": \"GPU-1234\","
                   " \"measured\": \"2026-01-01T00:00:00Z\", \"bandwidth_gbps\": 4222,"
                   " \"tflops\": {}}\n");
  cache_calls = f.bw_calls = 0;
  resolve(&p, &f);
  assert_int_equal(f.bw_calls, 0);
  assert_int_equal(cache_calls, 1);
  assert_true(p.gbps == 4222 && p.cache_gbps == 9000);
  assert_str_contains(p.source, "completed now");
  /* A failed cache copy: its rows are N/A, memory's are not, and the
   * banner says why. */
  unlink(path);
  fake_cache_gbps = NAN;
  resolve(&p, &f);
  assert_true(isnan(p.cache_gbps));
  assert_true(isnan(zlb__peaks_pct_ceiling(&p, ZLB__CEIL_CACHE, F16, 2e9, 0, 1.0)));
  assert_true(zlb__peaks_pct_ceiling(&p, ZLB__CEIL_MEMORY, F16, 2e9, 0, 1.0) > 0);
  zlb__peaks_describe(&p, 0, &line);
  assert_str_contains(line.buf, "cache bandwidth missing (fake cache copy failed)");
  zlb_strbuf_release(&line);
  text = read_text(path);
  assert_null(strstr(text, "cache_bandwidth_gbps"));
  free(text);
  assert_string_equal(zlb__ceiling_name(ZLB__CEIL_CACHE), "cache");
  assert_string_equal(zlb__ceiling_name(ZLB__CEIL_MEMORY), "memory");
}

/* Which ceiling judges a row, and which rates above it may be honest. */
static void test_ceiling_rules(void **state) {
  const size_t l2 = 62914560; /* the H200's 60 MiB */
  (void)state;
  /* A working set that fits in the L2 a timer leaves warm: the cache's,
   * also past half of it (a 34 MB row ran at 143 % of memory's copy rate
   * on the H200); larger, flushed, or no cache reported: memory's. */
  assert_int_equal(zlb__ceiling_for(33554432, l2, 0), ZLB__CEIL_CACHE);
  assert_int_equal(zlb__ceiling_for((double)l2, l2, 0), ZLB__CEIL_CACHE);
  assert_int_equal(zlb__ceiling_for((double)l2 + 1, l2, 0), ZLB__CEIL_MEMORY);
  assert_int_equal(zlb__ceiling_for(33554432, l2, 1), ZLB__CEIL_MEMORY);
  assert_int_equal(zlb__ceiling_for(33554432, 0, 0), ZLB__CEIL_MEMORY);
  assert_int_equal(zlb__ceiling_for(0, l2, 0), ZLB__CEIL_MEMORY);
  /* Above the cache's ceiling: always possibly honest. */
  assert_true(zlb__over_ceiling_honest(ZLB__CEIL_CACHE, 1e9, 100));
  /* Above memory's: within the slack of a copy's rate (a reduction at
   * 110 %, the boundary itself), not beyond it or without a ceiling. */
  assert_true(zlb__over_ceiling_honest(ZLB__CEIL_MEMORY, 4652, 4207));
  assert_true(zlb__over_ceiling_honest(ZLB__CEIL_MEMORY, ZLB__MEMORY_SLACK * 4000, 4000));
  assert_false(zlb__over_ceiling_honest(ZLB__CEIL_MEMORY, ZLB__MEMORY_SLACK * 4000 + 1, 4000));
  assert_false(zlb__over_ceiling_honest(ZLB__CEIL_MEMORY, 1e6 * 4000, 4000));
  assert_false(zlb__over_ceiling_honest(ZLB__CEIL_MEMORY, 4100, 0));
  assert_false(zlb__over_ceiling_honest(ZLB__CEIL_NONE, 4100, 4000));
}

static void test_unwritable_cache_reported(void **state) {
  zlb__peaks_t p;
  zlb__peaks_probe_t probe;
  struct fake f = {100, 0, "none", NAN, 0, 0};
  char bad[600];
  (void)state;
  /* A regular file where the cache's folder should be. */
  write_text(path, "x");
  snprintf(bad, sizeof(bad), "%s/sub/peaks.json", path);
  probe = (zlb__peaks_probe_t){&f, fake_bw, fake_gemm_dtypes, fake_gemm, NULL};
  zlb__peaks_resolve_with(&p, bad, "fake", &dev, &probe);
  assert_true(p.gbps == 100);
  assert_str_contains(p.cache_note, "cache not written");
}

/* The cache's folder: $ZL_CACHE_DIR, else $XDG_CACHE_HOME/zlbench, else
 * $HOME/.cache/zlbench, an empty value skipped (zlb_cache_dir, which the
 * FlagGems provider's bytecode folder uses too). */
static void test_cache_dir_order(void **state) {
  const char *names[] = {"ZL_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  char *saved[3];
  zlb_strbuf_t s = ZLB_STRBUF_INIT;
  (void)state;
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(names[i]);
    saved[i] = v ? strdup(v) : NULL;
  }
  setenv("ZL_CACHE_DIR", "/z", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  assert_int_equal(zlb_cache_dir(&s), 1);
  assert_string_equal(s.buf, "/z");
  zlb_strbuf_reset(&s);
  setenv("ZL_CACHE_DIR", "", 1);
  assert_int_equal(zlb_cache_dir(&s), 1);
  assert_string_equal(s.buf, "/x/zlbench");
  zlb_strbuf_reset(&s);
  unsetenv("ZL_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "", 1);
  assert_int_equal(zlb_cache_dir(&s), 1);
  assert_string_equal(s.buf, "/h/.cache/zlbench");
  zlb_strbuf_reset(&s);
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  zlb_strbuf_addstr(&s, "kept");
  assert_int_equal(zlb_cache_dir(&s), 0);
  assert_string_equal(s.buf, "kept");
  zlb_strbuf_release(&s);
  for (int i = 0; i < 3; i++) {
    if (saved[i])
      setenv(names[i], saved[i], 1);
    else
      unsetenv(names[i]);
    free(saved[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_bandwidth_only_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(test_later_run_completes_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(test_corrupt_cache_rejected, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_failure_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_ceiling, setup, teardown),
      cmocka_unit_test(test_ceiling_rules),
      cmocka_unit_test_setup_teardown(test_unwritable_cache_reported, setup, teardown),
      cmocka_unit_test(test_cache_dir_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
