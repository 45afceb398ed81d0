/* The measurement API of libzlbench.so: time work a caller brings (a
 * callback that enqueues one call on a stream, optionally a capture hook
 * that hands over a graph) with zlbench's engine: the graph timer with
 * per-shape fallback to the direct timer, the trace (CUPTI) and queue timers, budgets or
 * noise-based stopping, return modes and quantiles, repeat, L2 flush,
 * capture denial, verdicts, markers, clocks and throttle flags
 * (docs/python.md, docs/timing.md).
 *
 * Stable C ABI: this header includes nothing else of zlbench, every struct
 * the caller fills starts with its size, results are opaque and read by
 * key, and zlb_api_version() says which version the library implements.
 * Only the functions declared here are exported from libzlbench.so. */
#ifndef ZLBENCH_API_H
#define ZLBENCH_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ZLB_API __attribute__((visibility("default")))
#else
#define ZLB_API
#endif

/* Major * 10000 + minor. A new minor adds functions, option fields (at the
 * end of zlb_measure_opts_t) or result keys; a new major changes or
 * removes something. */
#define ZLB_API_VERSION_MAJOR 1
#define ZLB_API_VERSION_MINOR 3 /* 1.2: host_ms; 1.3: zlb_ab_verdict, zlb_measure_integrity */
#define ZLB_API_VERSION (ZLB_API_VERSION_MAJOR * 10000 + ZLB_API_VERSION_MINOR)

/** The API version this library implements (ZLB_API_VERSION it was built with). */
ZLB_API int zlb_api_version(void);

/* Every function returns 0 or a negative code (ZLB_API_E* below;
 * zlb_api_error_name() names one) and fills the caller's error object,
 * which may be NULL. */
typedef struct zlb_api_error {
  int code;              /* 0 or a negative ZLB code */
  int vendor_code;       /* the vendor runtime's code (e.g. CUDA's 900), 0 if none */
  char vendor_name[64];  /* its name ("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED") */
  char msg[768];         /* the whole message, naming the subject and the fix */
} zlb_api_error_t;

/* The codes (those of zlbench/error.h; fixed: the ABI). */
enum {
  ZLB_API_OK = 0,
  ZLB_API_EINVAL = -999,       /* invalid argument */
  ZLB_API_ENOMEM = -998,
  ZLB_API_EIO = -997,
  ZLB_API_ENOTFOUND = -995,    /* unknown backend, result key */
  ZLB_API_EUNAVAIL = -994,     /* backend runtime or device unavailable */
  ZLB_API_EDEVICE = -993,      /* a device runtime call failed */
  ZLB_API_EUNSUPPORTED = -992, /* not supported by this backend */
  ZLB_API_EFATAL = -990,       /* fatal device fault: no latency */
  ZLB_API_EPOISONED = -989,    /* a capture left the context unusable */
  ZLB_API_EOP = -987,          /* a callback failed */
  ZLB_API_EMISMATCH = -988,    /* an integrity check failed (API 1.3) */
  ZLB_API_EINTR = -986         /* interrupted */
};

/** "ZLB_EINVAL" for a code, "ZLB_OK" for 0, "ZLB_UNKNOWN" otherwise. */
ZLB_API const char *zlb_api_error_name(int code);

/* ---- sessions ------------------------------------------------------------ */

/* A backend opened on one device, with the stream the engine times on and
 * its L2 flush buffer. On CUDA the device's primary context is retained
 * (the context the CUDA runtime, and so torch, uses) and made current on
 * the calling thread. A session is used by one thread at a time: the
 * thread that opened it (the context is current there). */
typedef struct zlb_session zlb_session_t;

/**
 * Open `backend` ("cuda", "host", an alias such as "nvidia" or "cpu", or
 * NULL / "" / "auto" for the first backend with a device, host last) on
 * device `device` (>= 0).
 */
ZLB_API int zlb_session_open(const char *backend, int device, zlb_session_t **out,
                             zlb_api_error_t *err);
/** Synchronise and release everything the session holds; NULL is a no-op. */
ZLB_API void zlb_session_close(zlb_session_t *s);
/** The backend's name ("cuda", "host"). */
ZLB_API const char *zlb_session_backend(const zlb_session_t *s);
/** The device's ordinal and name. */
ZLB_API int zlb_session_device(const zlb_session_t *s);
ZLB_API const char *zlb_session_device_name(const zlb_session_t *s);
/** 1 when the backend has graphs (the graph timer can run), else 0. */
ZLB_API int zlb_session_has_graphs(const zlb_session_t *s);
/** The stream measurements run on, as the backend's raw handle (a CUstream
 * on CUDA: torch.cuda.ExternalStream and cupy.cuda.ExternalStream take it). */
ZLB_API void *zlb_session_stream(const zlb_session_t *s);
/** Wait for everything queued on the session's stream. */
ZLB_API int zlb_session_sync(zlb_session_t *s, zlb_api_error_t *err);

/* ---- measurements -------------------------------------------------------- */

enum {
  ZLB_API_TIMER_AUTO = 0, /* graph where the backend has graphs, else queue where it
                           * can hold a stream, else direct */
  ZLB_API_TIMER_GRAPH = 1,
  ZLB_API_TIMER_DIRECT = 2,
  ZLB_API_TIMER_TRACE = 3, /* kernel time from the backend's activity tracer (CUPTI) */
  ZLB_API_TIMER_CUPTI = 3, /* the same, by its former name */
  ZLB_API_TIMER_QUEUE = 4  /* K calls behind a held stream, one event pair per batch;
                            * fn must not wait for the device from the host */
};
enum {
  ZLB_API_RET_MEDIAN = 0,
  ZLB_API_RET_MEAN = 1,
  ZLB_API_RET_MIN = 2,
  ZLB_API_RET_MAX = 3,
  ZLB_API_RET_ALL = 4
};
enum { ZLB_API_STOP_BUDGET = 0, ZLB_API_STOP_NOISE = 1 };
enum {
  ZLB_API_COUNTS_BUDGET = 0, /* warmup_ms and rep_ms: the calls' own device time */
  ZLB_API_COUNTS_TRITON = 1  /* graph timer: the calls Triton's do_bench would make,
                              * budget / (estimate + one L2 flush) (API 1.1) */
};

#define ZLB_API_MAX_QUANTILES 8

/* The options of one measurement: the options of `zlbench run` that apply
 * to a single call (docs/timing.md). zlb_measure_opts_init() sets
 * struct_size and the defaults; a library older than the caller's header
 * refuses fields it does not know unless they are zero. */
typedef struct zlb_measure_opts {
  size_t struct_size;      /* sizeof(zlb_measure_opts_t) as the caller compiled it */
  int timer;               /* ZLB_API_TIMER_* (default AUTO) */
  double warmup_ms;        /* warm-up budget (10) */
  double rep_ms;           /* measurement budget (40) */
  int return_mode;         /* ZLB_API_RET_* (MEDIAN); ALL: the value is the median */
  int nquantiles;          /* 0..ZLB_API_MAX_QUANTILES: also report these quantiles */
  double quantiles[ZLB_API_MAX_QUANTILES]; /* each in [0, 1] */
  int repeat;              /* direct measurements, median over them (1) */
  int flush;               /* 1: flush the L2 before each direct and CUPTI sample (1) */
  size_t flush_bytes;      /* flush buffer size, 0: the backend's (256 MiB on CUDA) */
  int deny_capture;        /* 1: never capture, time directly with the deny marker (0) */
  int stop;                /* ZLB_API_STOP_* (BUDGET) */
  double max_noise;        /* noise stop: relative stdev target (0.005) */
  int min_samples;         /* noise stop: at least this many samples (10) */
  double min_time_ms;      /* noise stop: at least this much measured (2) */
  double timeout_ms;       /* noise stop: wall-clock limit (100) */
  int graph_max_launches;  /* most calls captured in one graph (1000) */
  double graph_replay_ms;  /* target duration of one replay (1) */
  int graph_min_replays;   /* at least this many timed replays (10) */
  int max_samples;         /* most direct samples (10000) */
  int trace_max_samples;   /* most CUPTI samples (500) */
  /* API 1.1 */
  int counts;              /* ZLB_API_COUNTS_* (BUDGET) */
} zlb_measure_opts_t;

/** Defaults (as `zlbench run`) and struct_size. */
ZLB_API void zlb_measure_opts_init(zlb_measure_opts_t *o);

/**
 * Enqueue one call of the work on `stream` (the backend's raw handle) and
 * return 0, or return non-zero with `err` filled (err->msg; err->code a
 * negative ZLB code or 0 for ZLB_EOP). It must not synchronise with the
 * host unless the timer is direct (docs/python.md, "What fn may do").
 */
typedef int (*zlb_call_fn)(void *user, void *stream, zlb_api_error_t *err);

/**
 * Optional capture hook, for callers whose framework must know about the
 * capture (torch: its allocator's private pool and its RNG): capture `k`
 * calls on `stream` into a graph, end the capture (also when failing) and
 * set *graph to the backend's raw graph (a CUgraph / cudaGraph_t on CUDA).
 * The caller keeps the graph and must keep it (and the memory it uses)
 * alive until zlb_measure returns; the engine instantiates its own
 * executable, replays and destroys it. On failure return non-zero with
 * err->vendor_code set where the runtime's code is known (it decides
 * refused / fatal) and err->vendor_name naming the failure for the marker.
 */
typedef int (*zlb_capture_fn)(void *user, int k, void *stream, void **graph,
                              zlb_api_error_t *err);

/* A finished measurement, read by key (zlb_result_number/_string/_array),
 * freed with zlb_result_free. */
typedef struct zlb_result zlb_result_t;

/**
 * Measure: the timer (AUTO: graph with per-shape fallback on a backend with
 * graphs, else queue where the backend can hold a stream, else direct;
 * GRAPH on a backend without graphs: direct with the marker
 * fallback(phase=capture,reason=ZLB_EUNSUPPORTED,repeat=N)), warm-up and
 * estimate as eager calls of `call`, the capture through `capture` when
 * given (else the engine captures `call`), clocks before and after. The
 * session's context is made current on the calling thread first. A
 * refused capture or hold falls back to direct timing with the marker; a
 * fatal fault (ZLB_EFATAL: the backend's table says so, or the context no
 * longer answers, whichever timer saw it) or a capture that left the
 * context unusable (ZLB_EPOISONED) is an error, with err->vendor_name the
 * reason, and the session is unusable afterwards (close it). An error from
 * a callback stops the measurement and comes back as the error; a callback
 * may report only the ZLB_API_E* codes (anything else becomes
 * ZLB_API_EOP). On success *out is the result.
 */
ZLB_API int zlb_measure(zlb_session_t *s, const zlb_measure_opts_t *o, zlb_call_fn call,
                        zlb_capture_fn capture, void *user, zlb_result_t **out,
                        zlb_api_error_t *err);

ZLB_API void zlb_result_free(zlb_result_t *r);

/* ---- the integrity gate (API 1.3, docs/integrity.md, "Python") ------------ */

/**
 * The caller's side of the integrity gate. Before the chosen timed sample
 * `iteration` (1-based: the sample's position among those the timer takes),
 * after the engine has waited for the device, refresh() must refill the
 * inputs the call reads IN PLACE with new values (the same addresses) and
 * poison the outputs it writes; the engine waits for the device again and
 * runs the sample as every other (a call, a graph replay, a queue batch).
 * After it, and after waiting for the device, check() compares the call's
 * latest outputs with a reference computed on the refreshed inputs: 0 when
 * they match, ZLB_API_EMISMATCH (or any positive value) with err->msg
 * saying what differs when not. Any other return is an error of the
 * callback (as for zlb_call_fn). Neither may measure on the session.
 * `iteration` is 0 for a call checked after the timed samples.
 */
typedef int (*zlb_integrity_fn)(void *user, size_t iteration, void *stream,
                                zlb_api_error_t *err);

typedef struct zlb_integrity {
  size_t struct_size;       /* sizeof(zlb_integrity_t) as the caller compiled it */
  zlb_integrity_fn refresh; /* required */
  zlb_integrity_fn check;   /* required */
  void *user;               /* both callbacks' first argument */
  unsigned long long seed;  /* chooses the checked sample, 2..10 (never the first) */
  int side_streams;         /* 1: before timing, trace one call and refuse a kernel on
                             * another stream than the session's, where the backend has
                             * a tracer that names streams (else the result says it was
                             * not checked); 0: skip */
} zlb_integrity_t;

/**
 * zlb_measure with the integrity gate (`ig` NULL: exactly zlb_measure).
 * The checked sample is left out of the statistics; when the timer takes
 * fewer samples than the one chosen, one more call after them is checked.
 * A failed check, or a kernel on another stream, is ZLB_API_EMISMATCH with
 * err->msg naming the timed iteration ("integrity: the outputs of timed
 * iteration 7 do not match ..."); the session stays usable. The result's
 * string key "integrity" says what was checked, and the number
 * "integrity_iteration" which sample (1-based; 0: a call after the
 * samples; -1: no check).
 */
ZLB_API int zlb_measure_integrity(zlb_session_t *s, const zlb_measure_opts_t *o,
                                  zlb_call_fn call, zlb_capture_fn capture, void *user,
                                  const zlb_integrity_t *ig, zlb_result_t **out,
                                  zlb_api_error_t *err);

/*
 * Result keys (docs/python.md has the list):
 *   numbers: value_ms estimate_ms noise noise_met wall_s graph_launches
 *            replays nsamples fallback_repeat throttled and, for
 *            before/after, clocks_before.sm_mhz .mem_mhz .temp_c .power_mw
 *            .reasons .throttled (-1: unknown) and clocks_after.*; since 1.2
 *            host_ms (median host time of one call over the first warm-up
 *            calls, NAN when not measured)
 *            since 1.3 integrity_iteration (zlb_measure_integrity)
 *   strings: timer marker verdict fallback_phase fallback_reason
 *            fallback_error note throttle_why backend device_name
 *            since 1.3 integrity (what the integrity gate checked, "" without it)
 *   arrays:  samples quantiles call_values
 * An unknown key is ZLB_ENOTFOUND.
 */
ZLB_API int zlb_result_number(const zlb_result_t *r, const char *key, double *out);
/** The string stays valid until zlb_result_free. */
ZLB_API int zlb_result_string(const zlb_result_t *r, const char *key, const char **out);
/** The values stay valid until zlb_result_free; *n may be 0. */
ZLB_API int zlb_result_array(const zlb_result_t *r, const char *key, const double **values,
                             size_t *n);
/** The i-th key and its kind ('n' number, 's' string, 'a' array); NULL past the last. */
ZLB_API const char *zlb_result_key(size_t i, char *kind);

/* ---- paired A/B (API 1.3) ------------------------------------------------ */

/* The verdict of `zlbench ab` (docs/ab.md) from block times a caller
 * measured itself (zlbench.ab in Python: two callables timed in blocks
 * A B B A ... with zlb_measure), by the same code as the command. */
#define ZLB_API_AB_MAX_PAIRS 64      /* pairs at most (the command's --blocks) */
#define ZLB_API_AB_MIN_PAIRS 5       /* fewer pairs have no interval: ambiguous */
#define ZLB_API_AB_MAX_THRESHOLD 0.5 /* the command's --threshold, (0, 50] % */
enum {
  ZLB_API_AB_SAME = 0,   /* the interval of B/A lies inside [1/(1+T), 1+T] */
  ZLB_API_AB_FASTER = 1, /* B faster: the interval lies below 1/(1+T) */
  ZLB_API_AB_SLOWER = 2, /* B slower: the interval lies above 1+T */
  ZLB_API_AB_AMBIGUOUS = 3
};

/* What zlb_ab_verdict fills. The caller sets struct_size; the library
 * writes no more than that. */
typedef struct zlb_api_ab {
  size_t struct_size;  /* sizeof(zlb_api_ab_t) as the caller compiled it */
  int verdict;         /* ZLB_API_AB_* */
  char verdict_name[16]; /* "same", "faster", "slower", "ambiguous" */
  size_t pairs;        /* pairs used (both times positive and finite) */
  int normalised;      /* pairs whose times were scaled to the reference clock */
  double a_ms, b_ms;   /* medians of the blocks (clock-normalised where noted) */
  double ratio;        /* exp(median ln(B/A)) */
  double lo, hi;       /* the distribution-free ~90 % interval of B/A (NAN: none) */
} zlb_api_ab_t;

/**
 * The verdict from n pairs: a_ms[i], b_ms[i] the times of A's block and of
 * the B block next to it; a_mhz, b_mhz (both or neither may be NULL) each
 * block's mean SM clock, 0 where unknown (a pair whose two clocks differ is
 * scaled to the median clock). threshold T in (0, ZLB_API_AB_MAX_THRESHOLD].
 * n at most ZLB_API_AB_MAX_PAIRS; a pair with a non-positive or non-finite
 * time is left out. ZLB_API_EINVAL for a NULL out or time array, n or T
 * out of range, a clock that is negative or not finite, or out->struct_size
 * smaller than version 1.3's struct.
 */
ZLB_API int zlb_ab_verdict(const double *a_ms, const double *b_ms, const double *a_mhz,
                           const double *b_mhz, size_t n, double threshold, zlb_api_ab_t *out,
                           zlb_api_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
