/* Unit tests of the summary layer: golden logs -> summary.csv, parser
 * robustness (every prefix, garbage), folder scan, geometric means. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zlbench/base.h"
#include "zlbench/report.h"

#ifndef ZLB_TEST_DATA
#define ZLB_TEST_DATA "tests/data"
#endif

/* ---- helpers ------------------------------------------------------------- */

static char *read_data(const char *name) {
  zlb_strbuf_t path = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  char *text = NULL;
  zlb_strbuf_addf(&path, "%s/summary/%s", ZLB_TEST_DATA, name);
  if (zlb_read_file(path.buf, &text, NULL, &err) != 0)
    fail_msg("%s", err.msg);
  zlb_strbuf_release(&path);
  return text;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw) {
  (void)st;
  (void)ftw;
  return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_rf(const char *path) {
  nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *make_tmpdir(void) {
  char tmpl[] = "/tmp/zlb-test-summary-XXXXXX";
  char *d = mkdtemp(tmpl);
  assert_non_null(d);
  return zlb_xstrdup(d);
}

static void write_text(const char *dir, const char *rel, const char *text) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  char *slash;
  zlb_path_join(&p, dir, rel);
  slash = strrchr(p.buf, '/');
  *slash = '\0';
  assert_int_equal(zlb_mkdirs(p.buf, &err), 0);
  *slash = '/';
  assert_int_equal(zlb_write_file_atomic(p.buf, text, strlen(text), &err), 0);
  zlb_strbuf_release(&p);
}

static void parse_text(zlb_summary_t *s, const char *text) {
  assert_int_equal(zlb_summary_parse_log(s, text, "t.log", NULL), 0);
}

/* ---- golden files ---------------------------------------------------------- */

/* parse -> sort -> write summary.csv to a temporary file -> compare with
 * NAME.expected.csv byte for byte. */
static void check_golden(const char *name) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t log = ZLB_STRBUF_INIT, exp = ZLB_STRBUF_INIT,
               out = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  char *text, *want, *got, *dir = make_tmpdir();

  zlb_strbuf_addf(&log, "%s.log", name);
  zlb_strbuf_addf(&exp, "%s.expected.csv", name);
  zlb_strbuf_addf(&out, "%s/summary.csv", dir);
  text = read_data(log.buf);
  want = read_data(exp.buf);
  assert_int_equal(zlb_summary_parse_log(&s, text, log.buf, &err), 0);
  assert_int_equal(s.nlogs, 1);
  zlb_summary_sort(&s);
  assert_int_equal(zlb_summary_write_csv(&s, out.buf, &err), 0);
  assert_int_equal(zlb_read_file(out.buf, &got, NULL, &err), 0);
  assert_string_equal(got, want);

  free(got);
  free(want);
  free(text);
  zlb_summary_release(&s);
  rm_rf(dir);
  free(dir);
  zlb_strbuf_release(&log);
  zlb_strbuf_release(&exp);
  zlb_strbuf_release(&out);
}

static void test_golden_ours(void **state) {
  (void)state;
  check_golden("ours_run");
}

/* A log from before the trace timer's rename: its "cupti" rows read as
 * "trace", as the rows of today's logs do. */
static void test_golden_old_timer_name(void **state) {
  (void)state;
  check_golden("old_cupti");
  assert_string_equal(zlb_summary_timer_name("cupti"), "trace");
  assert_string_equal(zlb_summary_timer_name("graph"), "graph");
  assert_string_equal(zlb_summary_timer_name(""), "");
}

static void test_golden_flaggems_current(void **state) {
  (void)state;
  check_golden("flaggems_current");
}

static void test_golden_flaggems_legacy(void **state) {
  (void)state;
  check_golden("flaggems_legacy");
}

static void test_golden_flaggems_record(void **state) {
  (void)state;
  check_golden("flaggems_record");
}

static void test_golden_truncated(void **state) {
  (void)state;
  check_golden("truncated");
}

static void test_golden_mixed(void **state) {
  (void)state;
  check_golden("mixed");
}

/* ---- robustness ------------------------------------------------------------ */

/* A log cut at any byte (a child killed mid-write) yields the first rows
 * of the whole log, unchanged: never a row the whole log does not have. */
static void test_every_prefix(void **state) {
  static const char *const names[] = {
      "ours_run.log", "flaggems_current.log", "flaggems_legacy.log",
      "flaggems_record.log", "truncated.log"};
  (void)state;
  for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
    zlb_summary_t full = ZLB_SUMMARY_INIT;
    zlb_strbuf_t full_csv = ZLB_STRBUF_INIT;
    char *text = read_data(names[f]);
    size_t len = strlen(text);
    parse_text(&full, text);
    zlb_summary_format_csv(&full, &full_csv);
    for (size_t k = 0; k <= len; k++) {
      zlb_summary_t part = ZLB_SUMMARY_INIT;
      zlb_strbuf_t csv = ZLB_STRBUF_INIT;
      char saved = text[k];
      text[k] = '\0';
      parse_text(&part, text);
      text[k] = saved;
      assert_true(part.n <= full.n);
      /* rows come in log order, so the prefix's CSV is a prefix too */
      zlb_summary_format_csv(&part, &csv);
      if (strncmp(csv.buf, full_csv.buf, csv.len) != 0)
        fail_msg("%s cut at byte %zu yields a row the whole log lacks:\n%s",
                 names[f], k, csv.buf);
      zlb_strbuf_release(&csv);
      zlb_summary_release(&part);
    }
    free(text);
    zlb_strbuf_release(&full_csv);
    zlb_summary_release(&full);
  }
}

/* Random lines built from table fragments: no crash, no leak, and only
 * well-formed rows. */
static void test_garbage(void **state) {
  static const char *const bits[] = {
      "Operator: x  Performance Test (dtype=torch.float16, mode=k,level=c)",
      "Operator: ", "Performance Test (", "dtype=", "Status", "Size",
      "Size Detail", "Baseline (ms)", "Gems GBPS ", "Timer", "Marker",
      "SUCCESS", "FAILED", "N/A", "NaN", "-Infinity", "1.5", "[", "]", "(",
      ")", "{", "'", "\"", "  note:", "------", "[INFO] {", "[INFO] [",
      "\"op_name\": \"a\"", "\"result\": [", "run", "family=", "\t", "\r",
      "\033[31m", " ", "  ", "\n", "\n", "\n", "x", "0"};
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t text = ZLB_STRBUF_INIT;
  uint64_t seed = 0x9e3779b97f4a7c15u;
  (void)state;
  for (int round = 0; round < 200; round++) {
    zlb_strbuf_reset(&text);
    for (int i = 0; i < 400; i++) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      zlb_strbuf_addstr(&text, bits[(seed >> 33) % (sizeof(bits) /
                                                    sizeof(bits[0]))]);
    }
    parse_text(&s, text.buf);
  }
  for (size_t i = 0; i < s.n; i++)
    assert_true(!strcmp(s.rows[i].status, "SUCCESS") ||
                !strcmp(s.rows[i].status, "FAILED"));
  assert_int_equal(s.nlogs, 200);
  zlb_summary_release(&s);
  zlb_strbuf_release(&text);
  parse_text(&s, NULL);
  parse_text(&s, "");
  assert_int_equal(s.n, 0);
  zlb_summary_release(&s);
}

#define OURS_HEAD                                                           \
  "Operator: relu  Performance Test (dtype=float32, mode=graph,level=core)\n" \
  "Status  Baseline (ms)  Candidate (ms)  Speedup  GB/s  TFLOP/s  %Peak  "   \
  "Timer  Marker  Size Detail\n"                                            \
  "-----------------------------------------------------------------\n"

/* A row without its newline was cut short: "[64, 64]" may have been
 * "[64, 64, 3]" (and "1.2" "1.25"), so it never counts. */
static void test_unterminated_last_line(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  (void)state;
  parse_text(&s, OURS_HEAD
             "SUCCESS 1.0 0.5 2.0 1 2 3 graph - [64, 64]\n"
             "SUCCESS 1.0 0.5 2.0 1 2 3 graph - [64, 64]");
  assert_int_equal(s.n, 1);
  assert_string_equal(s.rows[0].shape, "[64, 64]");
  zlb_summary_release(&s);
  parse_text(&s, OURS_HEAD "SUCCESS 1.0 0.5 2.0 1 2 3 graph");
  assert_int_equal(s.n, 0);
  zlb_summary_release(&s);
}

/* The pytest plugin's `# zlbench: row N:` lines after a FlagGems table fill
 * that table's Timer and Marker from the candidate's (last) part; lines
 * for rows that do not exist, and tables without such lines, change
 * nothing. */
static void test_flaggems_plugin_lines(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  const char *head =
      "\nOperator: abs  Performance Test (dtype=torch.float16, mode=kernel,level=core)\n"
      "Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup          "
      "Size Detail\n"
      "-------------------------------------------------------------------------------------"
      "----------\n";
  zlb_strbuf_t t = ZLB_STRBUF_INIT;
  (void)state;
  zlb_strbuf_addf(&t, "%s"
                  "SUCCESS               0.004700            0.005000               0.940"
                  "          [torch.Size([64, 64])]\n"
                  "SUCCESS               0.010000            0.008000               1.250"
                  "          [torch.Size([1024, 1024])]\n"
                  "\n"
                  "# zlbench: row 1: torch timer=graph marker=- verdict=none samples=10; "
                  "gems timer=direct marker=fallback(phase=capture,reason=ERR,repeat=1) "
                  "verdict=refused samples=12\n"
                  "# zlbench: row 2: torch timer=direct marker=- verdict=none samples=3; "
                  "gems timer=cupti marker=- verdict=none samples=4\n"
                  "# zlbench: row 3: torch timer=graph marker=- verdict=none; gems timer=graph\n"
                  "# zlbench: row x: gems timer=graph\n"
                  "%s"
                  "SUCCESS               0.004700            0.005000               0.940"
                  "          [torch.Size([64, 64])]\n\n",
                  head, head);
  parse_text(&s, t.buf);
  assert_int_equal(s.n, 3);
  assert_string_equal(s.rows[0].timer, "direct");
  assert_string_equal(s.rows[0].marker, "fallback(phase=capture,reason=ERR,repeat=1)");
  assert_string_equal(s.rows[1].timer, "trace"); /* the old name, read as today's */
  assert_string_equal(s.rows[1].marker, "");
  assert_string_equal(s.rows[2].timer, "");
  assert_string_equal(s.rows[2].marker, "");
  zlb_summary_release(&s);
  zlb_strbuf_release(&t);
}

/* Host time per call: our table's `Base Host (us)` and `Host (us)`
 * columns (wherever they stand), a plugin line's `host_us=` of the first
 * (torch) and last (gems) parts, and empty cells where a log says nothing;
 * summary.csv appends them after `source`. */
static void test_host_columns(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t csv = ZLB_STRBUF_INIT;
  (void)state;
  parse_text(&s,
             "Operator: add  Performance Test (dtype=float32, mode=graph,level=core)\n"
             "Status  Baseline (ms)  Candidate (ms)  Speedup  Noise%  Base Host (us)  Host (us)  "
             "Timer  Marker  Size Detail\n"
             "---------------------------------------------\n"
             "SUCCESS 0.01 0.02 0.5 1.00 4.250 140.125 graph - [64, 64]\n"
             "FAILED N/A N/A N/A N/A N/A N/A graph error=launch [128]\n"
             "\n"
             "Operator: mul  Performance Test (dtype=torch.float16, mode=kernel,level=core)\n"
             "Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup          "
             "Size Detail\n"
             "------------------------------------------------------\n"
             "SUCCESS               0.006000            0.140000               0.043"
             "          [torch.Size([64, 64])]\n"
             "SUCCESS               0.006000            0.140000               0.043"
             "          [torch.Size([8])]\n"
             "SUCCESS               0.006000            0.140000               0.043"
             "          [torch.Size([9])]\n"
             "\n"
             "# zlbench: row 1: torch timer=graph marker=- verdict=none samples=10 host_us=6.5; "
             "gems timer=graph marker=- verdict=none samples=10 host_us=138.75\n"
             "# zlbench: row 2: call1 timer=graph marker=- verdict=none samples=3 host_us=9.5\n"
             "# zlbench: row 3: torch timer=graph host_us=-1; gems timer=graph host_us=x\n");
  assert_int_equal(s.n, 5);
  assert_true(s.rows[0].base_host_us == 4.25 && s.rows[0].cand_host_us == 140.125);
  assert_true(s.rows[0].base_ms == 0.01 && s.rows[0].speedup == 0.5); /* nothing moved */
  assert_string_equal(s.rows[0].timer, "graph");
  assert_true(isnan(s.rows[1].base_host_us) && isnan(s.rows[1].cand_host_us));
  assert_true(s.rows[2].base_host_us == 6.5 && s.rows[2].cand_host_us == 138.75);
  /* One measurement: the candidate's only. */
  assert_true(isnan(s.rows[3].base_host_us) && s.rows[3].cand_host_us == 9.5);
  /* Not a host time: ignored. */
  assert_true(isnan(s.rows[4].base_host_us) && isnan(s.rows[4].cand_host_us));
  zlb_summary_format_csv(&s, &csv);
  assert_true(strstr(csv.buf, ",status,source,base_host_us,cand_host_us,ceiling\n") != NULL);
  assert_true(strstr(csv.buf, ",SUCCESS,t.log,4.250,140.125,\n") != NULL);
  assert_true(strstr(csv.buf, ",FAILED,t.log,,,\n") != NULL);
  assert_true(strstr(csv.buf, ",SUCCESS,t.log,6.500,138.750,\n") != NULL);
  zlb_strbuf_release(&csv);
  zlb_summary_release(&s);
}

/* The Ceiling column (what %Peak is of) is read by its label; only the
 * two names a run writes are kept, anything else is "not said". */
static void test_ceiling_column(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t csv = ZLB_STRBUF_INIT;
  (void)state;
  parse_text(&s,
             "Operator: add  Performance Test (dtype=float32, mode=graph,level=core)\n"
             "Status  Speedup  %Peak  Timer  Ceiling  Marker  Size Detail\n"
             "---------------------------------------------\n"
             "SUCCESS 1.5 71.2 graph cache - [64, 64]\n"
             "SUCCESS 1.5 40.0 graph memory - [4096, 4096]\n"
             "SUCCESS 1.5 N/A graph - - [8]\n"
             "SUCCESS 1.5 10.0 graph =cmd() - [9]\n");
  assert_int_equal(s.n, 4);
  assert_string_equal(s.rows[0].ceiling, "cache");
  assert_true(s.rows[0].pct_peak == 71.2);
  assert_string_equal(s.rows[1].ceiling, "memory");
  assert_string_equal(s.rows[2].ceiling, "");
  assert_string_equal(s.rows[3].ceiling, "");
  zlb_summary_ceilings(&s, &csv);
  assert_string_equal(csv.buf, "%Peak: 1 row against the memory ceiling (max 40.0 %), 1 row "
                               "against the cache ceiling (max 71.2 %), 1 row with no ceiling "
                               "named (max 10.0 %), 0 above 100 %\n");
  zlb_strbuf_reset(&csv);
  s.rows[1].pct_peak = 104.5; /* a log from elsewhere may hold one */
  zlb_summary_ceilings(&s, &csv);
  assert_non_null(strstr(csv.buf, "(max 104.5 %), 1 row against the cache"));
  assert_non_null(strstr(csv.buf, "1 above 100 %\n"));
  zlb_strbuf_reset(&csv);
  s.rows[1].pct_peak = 40.0;
  zlb_summary_format_csv(&s, &csv);
  assert_non_null(strstr(csv.buf, "71.200,graph,,SUCCESS,t.log,,,cache\n"));
  assert_non_null(strstr(csv.buf, "40.000,graph,,SUCCESS,t.log,,,memory\n"));
  zlb_strbuf_release(&csv);
  zlb_summary_release(&s);
}

static void test_value_spellings(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  (void)state;
  parse_text(&s, OURS_HEAD
             "SUCCESS -Infinity Infinity -inf inf NaN 12.5% direct - [1]\n"
             "SUCCESS nan N/A 1e-3 +2 -0.5 None direct - [2]\n"
             "SUCCESS 1.0 0.5 2.0x 1 2 3 graph - [3]\n" /* 2.0x: not a row */
             "SUCCESS 1.0 0.5 2.0 1 2 3 graph - [4]\n");
  assert_int_equal(s.n, 2);
  assert_true(isinf(s.rows[0].base_ms) && s.rows[0].base_ms < 0);
  assert_true(isinf(s.rows[0].cand_ms) && s.rows[0].cand_ms > 0);
  assert_true(isinf(s.rows[0].speedup) && s.rows[0].speedup < 0);
  assert_true(isinf(s.rows[0].gbps) && s.rows[0].gbps > 0);
  assert_true(isnan(s.rows[0].tflops));
  assert_true(s.rows[0].pct_peak == 12.5);
  assert_true(isnan(s.rows[1].base_ms) && isnan(s.rows[1].cand_ms));
  assert_true(s.rows[1].speedup == 1e-3 && s.rows[1].gbps == 2);
  assert_true(s.rows[1].tflops == -0.5 && isnan(s.rows[1].pct_peak));
  assert_string_equal(s.rows[1].shape, "[2]");
  zlb_summary_release(&s);
}

/* Unknown and ignored columns keep their place; the banner names the
 * family only of its own operator; ANSI colours and CRLF are ignored. */
static void test_columns_family_noise(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  (void)state;
  parse_text(&s,
             "zlbench 0.1.0  run gelu  family=activation\r\n"
             "Operator: gelu  Performance Test (dtype=bfloat16, mode=graph, "
             "level=core)\r\n"
             "Status  Baseline (ms)  Candidate (ms)  Speedup  Config  "
             "Noise%  Samples  Mystery Column  Timer  Marker  Size Detail\r\n"
             "----------------\r\n"
             "\033[32mSUCCESS\033[0m 2.0 1.0 2.000 BLOCK=128 0.4% 100 ??? "
             "graph - [8, 8] x\r\n"
             "Operator: silu  Performance Test (dtype=bfloat16, mode=graph, "
             "level=core)\n"
             "Status  Speedup  Size Detail\n"
             "FAILED N/A [1]\n");
  assert_int_equal(s.n, 2);
  assert_string_equal(s.rows[0].op, "gelu");
  assert_string_equal(s.rows[0].family, "activation");
  assert_string_equal(s.rows[0].dtype, "bfloat16");
  assert_string_equal(s.rows[0].shape, "[8, 8] x");
  assert_string_equal(s.rows[0].timer, "graph");
  assert_string_equal(s.rows[0].marker, "");
  assert_true(s.rows[0].base_ms == 2.0 && s.rows[0].speedup == 2.0);
  assert_string_equal(s.rows[1].op, "silu");
  assert_string_equal(s.rows[1].family, "");
  assert_string_equal(s.rows[1].status, "FAILED");
  zlb_summary_release(&s);
}

/* ---- sort, CSV ------------------------------------------------------------- */

static void add_row(zlb_summary_t *s, const char *op, const char *dtype,
                    const char *shape, const char *status, double speedup) {
  zlb_summary_row_t r;
  memset(&r, 0, sizeof(r));
  r.op = (char *)op;
  r.dtype = (char *)dtype;
  r.shape = (char *)shape;
  r.status = (char *)status;
  r.base_ms = r.cand_ms = r.gbps = r.tflops = r.pct_peak = NAN;
  r.base_host_us = r.cand_host_us = NAN;
  r.speedup = speedup;
  zlb_summary_add(s, &r);
}

static void test_sort_is_stable(void **state) {
  static const char *const want[][3] = {
      {"add", "float16", "1"}, {"add", "float16", "3"},
      {"add", "float32", "2"}, {"mul", "bfloat16", "5"},
      {"mul", "float16", "4"}, {"mul", "float16", "6"}};
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  (void)state;
  add_row(&s, "mul", "float16", "4", "SUCCESS", 1);
  add_row(&s, "add", "float16", "1", "SUCCESS", 1);
  add_row(&s, "add", "float32", "2", "SUCCESS", 1);
  add_row(&s, "mul", "bfloat16", "5", "SUCCESS", 1);
  add_row(&s, "add", "float16", "3", "SUCCESS", 1);
  add_row(&s, "mul", "float16", "6", "SUCCESS", 1);
  zlb_summary_sort(&s);
  assert_int_equal(s.n, 6);
  for (size_t i = 0; i < s.n; i++) {
    assert_string_equal(s.rows[i].op, want[i][0]);
    assert_string_equal(s.rows[i].dtype, want[i][1]);
    assert_string_equal(s.rows[i].shape, want[i][2]);
  }
  zlb_summary_release(&s);
}

static void test_csv_quoting_and_errors(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t csv = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  (void)state;
  zlb_summary_format_csv(&s, &csv);
  assert_string_equal(csv.buf,
                      "operator,family,dtype,shape,baseline_ms,candidate_ms,"
                      "speedup,gbps,tflops,pct_peak,timer,marker,status,"
                      "source,base_host_us,cand_host_us,ceiling\n");
  zlb_strbuf_reset(&csv);
  add_row(&s, "a\"b", "float16", "[1, 2]", "SUCCESS", -INFINITY);
  zlb_summary_format_csv(&s, &csv);
  assert_non_null(strstr(csv.buf, "\n\"a\"\"b\",,float16,\"[1, 2]\",,,-inf,,,,,,"
                                  "SUCCESS,,,,\n"));
  assert_int_equal(zlb_summary_write_csv(&s, "/nonexistent-zlb/x/summary.csv",
                                         &err),
                   ZLB_EIO);
  assert_non_null(strstr(err.msg, "/nonexistent-zlb/x/summary.csv"));
  zlb_strbuf_release(&csv);
  zlb_summary_release(&s);
}

/* ---- folder scan ------------------------------------------------------------- */

static void test_scan_dir(void **state) {
  static const char table[] =
      "Operator: %s  Performance Test (dtype=float16, mode=graph,level=core)\n"
      "Status  Speedup  Size Detail\n"
      "------\n"
      "SUCCESS 1.5 [1]\n";
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t t = ZLB_STRBUF_INIT, p = ZLB_STRBUF_INIT, q = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  char *dir = make_tmpdir();
  (void)state;

#define PUT(rel, op)                                                        \
  do {                                                                      \
    zlb_strbuf_reset(&t);                                                   \
    zlb_strbuf_addf(&t, table, op);                                         \
    write_text(dir, rel, t.buf);                                            \
  } while (0)
  PUT("b/run.log", "bop");
  PUT("a/x/run.log", "aop");
  PUT("a/x/other.log", "aop2");
  PUT("attempts/run.log", "skipped1");
  PUT("a/attempts/1/run.log", "skipped2");
  PUT("a/stderr.log", "skipped3");
  PUT("a/run.log.txt", "skipped4");
  PUT("a/empty.log", "");
#undef PUT
  zlb_path_join(&p, dir, "a/x/run.log");
  zlb_path_join(&q, dir, "link.log");
  assert_int_equal(symlink(p.buf, q.buf), 0);
  zlb_strbuf_reset(&p);
  zlb_strbuf_reset(&q);
  zlb_path_join(&p, dir, "a");
  zlb_path_join(&q, dir, "linkdir");
  assert_int_equal(symlink(p.buf, q.buf), 0);

  assert_int_equal(zlb_summary_scan_dir(&s, dir, &err), 0);
  assert_int_equal(s.nlogs, 4); /* a/empty.log a/x/other.log a/x/run.log b/run.log */
  assert_int_equal(s.n, 3);
  assert_string_equal(s.rows[0].source, "a/x/other.log");
  assert_string_equal(s.rows[0].op, "aop2");
  assert_string_equal(s.rows[1].source, "a/x/run.log");
  assert_string_equal(s.rows[2].source, "b/run.log");
  zlb_summary_release(&s);

  zlb_strbuf_reset(&p);
  zlb_path_join(&p, dir, "missing");
  assert_int_equal(zlb_summary_scan_dir(&s, p.buf, &err), ZLB_ENOTFOUND);
  assert_non_null(strstr(err.msg, p.buf));

  rm_rf(dir);
  free(dir);
  zlb_strbuf_release(&t);
  zlb_strbuf_release(&p);
  zlb_strbuf_release(&q);
}

/* ---- geometric means ------------------------------------------------------- */

static void test_geomean_table(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  (void)state;
  add_row(&s, "softmax", "float32", "[1]", "SUCCESS", 0.5);
  add_row(&s, "add", "float16", "[1]", "SUCCESS", 2.0);
  add_row(&s, "add", "float16", "[2]", "SUCCESS", 8.0);
  add_row(&s, "add", "bfloat16", "[1]", "FAILED", 100.0);  /* not SUCCESS */
  add_row(&s, "add", "float32", "[1]", "SUCCESS", 0.0);    /* not > 0 */
  add_row(&s, "add", "float32", "[2]", "SUCCESS", NAN);    /* absent */
  add_row(&s, "add", "float32", "[3]", "SUCCESS", INFINITY); /* not finite */
  add_row(&s, "add", "int8", "[1]", "SUCCESS", -1.0);      /* not > 0 */
  add_row(&s, "add", "complex64", "[1]", "SKIPPED", 3.0);  /* neither */
  add_row(&s, "a_very_long_operator_name", "int8", "[1]", "SUCCESS", 1.1);
  zlb_summary_geomean(&s, &out);
  assert_string_equal(
      out.buf,
      "operator                    float16  bfloat16   float32  complex64"
      "      int8       all  SUCCESS  FAILED\n"
      "------------------------------------------------------------------"
      "-------------------------------------\n"
      "a_very_long_operator_name         -         -         -          -"
      "     1.100     1.100        1       0\n"
      "add                           4.000         -         -          -"
      "         -     4.000        6       1\n"
      "softmax                           -         -     0.500          -"
      "         -     0.500        1       0\n"
      "------------------------------------------------------------------"
      "-------------------------------------\n"
      "geomean                       4.000         -     0.500          -"
      "     1.100     1.722        8       1\n");
  /* geomean/all: (2 * 8 * 0.5 * 1.1)^(1/4) = 8.8^0.25 = 1.7224 */
  zlb_strbuf_release(&out);
  zlb_summary_release(&s);
}

static void test_geomean_empty(void **state) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  (void)state;
  zlb_summary_geomean(&s, &out);
  assert_string_equal(out.buf,
                      "operator       all  SUCCESS  FAILED\n"
                      "-----------------------------------\n"
                      "-----------------------------------\n"
                      "geomean          -        0       0\n");
  zlb_strbuf_release(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden_ours),
      cmocka_unit_test(test_golden_old_timer_name),
      cmocka_unit_test(test_golden_flaggems_current),
      cmocka_unit_test(test_golden_flaggems_legacy),
      cmocka_unit_test(test_golden_flaggems_record),
      cmocka_unit_test(test_golden_truncated),
      cmocka_unit_test(test_golden_mixed),
      cmocka_unit_test(test_every_prefix),
      cmocka_unit_test(test_garbage),
      cmocka_unit_test(test_unterminated_last_line),
      cmocka_unit_test(test_value_spellings),
      cmocka_unit_test(test_flaggems_plugin_lines),
      cmocka_unit_test(test_columns_family_noise),
      cmocka_unit_test(test_host_columns),
      cmocka_unit_test(test_ceiling_column),
      cmocka_unit_test(test_sort_is_stable),
      cmocka_unit_test(test_csv_quoting_and_errors),
      cmocka_unit_test(test_scan_dir),
      cmocka_unit_test(test_geomean_table),
      cmocka_unit_test(test_geomean_empty),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
