/* A fake ACL runtime for tests: built as libascendcl.so (and, without
 * aclmdlRICaptureEnd, as a library that lacks a symbol), exporting the
 * entry points the Ascend backend loads with ACL's signatures and error
 * codes (declared once, in src/device/acl_api.h: no CANN header is
 * available to check them against, so the fake and the backend share
 * those assumptions), plus aclrtLaunchHostFunc for the test operators. The
 * device is emulated by fake_core.c; see fake_core.h for the ZL_FAKE_*
 * variables.
 *
 * As ACL does: ASCEND_RT_VISIBLE_DEVICES lists logical ids in ascending
 * order, renumbered from 0; calls that need a device fail with 107002
 * (no context) on a thread that never called aclrtSetDevice; aclInit finds
 * no device without failing (aclrtGetDeviceCount says 207004); the copy
 * and fill calls refuse a count beyond the destination size.
 *
 * Unlike ACL: the SoC name names the physical device current on the
 * calling thread ("Ascend910B-fake-N<physical>"), so that a test can see
 * which device a process got; each device attribute has its own value per
 * device (a wrong attribute id is seen); destroying a model twice, or one
 * the runtime never made, aborts the process with a message (a double
 * destroy fails every test that does it); zfake_acl_models_live() counts
 * the models alive. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "device/acl_api.h"
#include "fake_core.h"

#define EXPORT __attribute__((visibility("default")))

static const char *const acl_visibility[] = {"ASCEND_RT_VISIBLE_DEVICES", NULL};

static const fk_vendor_t acl_vendor = {
    .name = "acl",
    .visibility_env = acl_visibility,
    .visibility_ascending = 1,
    .fault_message = "fake ACL runtime: device memory fault on NPU %d at address %p; aborting",
    .ok = ZACL_SUCCESS,
    .invalid_value = ZACL_ERROR_RT_PARAM_INVALID,
    .out_of_memory = ZACL_ERROR_RT_MEMORY_ALLOCATION,
    .no_device = ZACL_ERROR_RT_NO_DEVICE,
    .init_no_device = ZACL_SUCCESS, /* aclInit does not look for devices */
    .invalid_device = ZACL_ERROR_RT_INVALID_DEVICEID,
    .invalid_handle = ZACL_ERROR_RT_INVALID_HANDLE,
    .not_ready = ZACL_ERROR_RT_EVENT_NOT_COMPLETE,
    .illegal_address = ZACL_ERROR_RT_DEVICE_MEM_ERROR,
    .context_lost = ZACL_ERROR_RT_LOST_HEARTBEAT,
    .not_supported = ZACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    .capture_unsupported = ZACL_ERROR_RT_STREAM_CAPTURED,
    .capture_invalidated = ZACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
    .capture_unmatched = ZACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
};

__attribute__((constructor)) static void fake_acl_setup(void) { fk_setup(&acl_vendor); }

#define S(x) ((fk_stream_t *)(x))
#define E(x) ((fk_event_t *)(x))
#define G(x) ((fk_graph_t *)(x))

/* Every exported function has the declaration of acl_api.h. */
#define DECLARE(field, sym, params) EXPORT int sym params;
ZACL_REQUIRED(DECLARE)
ZACL_TEST_ONLY(DECLARE)
#undef DECLARE
#define DECLARE(field, sym, params) EXPORT const char *sym params;
ZACL_STRINGS(DECLARE)
ZACL_OPTIONAL_STRINGS(DECLARE)
#undef DECLARE
EXPORT int aclFinalize(void);
EXPORT int zfake_acl_models_live(void);

/* The last failure, for aclGetRecentErrMsg (process-wide here; ACL keeps
 * one per thread). */
static int last_error;

static int note(int r) {
  if (r != ZACL_SUCCESS)
    __atomic_store_n(&last_error, r, __ATOMIC_SEQ_CST);
  return r;
}

const char *aclGetRecentErrMsg(void) {
  int r = __atomic_exchange_n(&last_error, 0, __ATOMIC_SEQ_CST);
  switch (r) {
  case 0: return NULL;
  case ZACL_ERROR_RT_DEVICE_MEM_ERROR: return "EZ9999: fake NPU: memory access outside every allocation";
  case ZACL_ERROR_RT_LOST_HEARTBEAT: return "EZ9999: fake NPU: the device stopped answering";
  case ZACL_ERROR_RT_STREAM_CAPTURED: return "EE1001: fake runtime: not allowed on a capturing stream";
  case ZACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED: return "EE1001: fake runtime: the capture was invalidated";
  case ZACL_ERROR_RT_CONTEXT_NULL: return "EE1001: fake runtime: no device set on this thread";
  default: return "EE9999: fake runtime: the call failed";
  }
}

/* Calls that need a device made current on this thread. */
#define NEED_DEVICE()                                                           \
  do {                                                                          \
    if (!fk_device_is_set())                                                    \
      return note(ZACL_ERROR_RT_CONTEXT_NULL);                                  \
  } while (0)

int aclInit(const char *config) {
  (void)config;
  return note(fk_init());
}

int aclFinalize(void) { return ZACL_SUCCESS; }

int aclrtGetDeviceCount(uint32_t *count) {
  int n = 0, r;
  if (!count)
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  r = fk_device_count(&n);
  *count = (uint32_t)n;
  return note(r);
}

int aclrtSetDevice(int32_t device) { return note(fk_set_device(device)); }

int aclrtGetDevice(int32_t *device) {
  int d = 0, r;
  if (!device)
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  NEED_DEVICE();
  r = fk_get_device(&d);
  *device = d;
  return note(r);
}

const char *aclrtGetSocName(void) {
  static char names[64][32];
  int d = 0, phys;
  fk_get_device(&d);
  phys = fk_physical(d);
  if (phys < 0 || phys >= 64)
    return NULL;
  snprintf(names[phys], sizeof(names[phys]), "Ascend910B-fake-N%d", phys);
  return names[phys];
}

/* A distinct value per attribute and device, so that a wrong attribute id
 * is seen; ids not listed are invalid. */
int aclrtGetDeviceInfo(uint32_t device, int attr, int64_t *value) {
  int phys = fk_physical((int)device);
  if (!value)
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  if (phys < 0)
    return note(ZACL_ERROR_RT_INVALID_DEVICEID);
  switch (attr) {
  case ZACL_DEV_ATTR_AICORE_CORE_NUM: *value = 24 + phys; break;
  case ZACL_DEV_ATTR_VECTOR_CORE_NUM: *value = 48 + phys; break;
  case ZACL_DEV_ATTR_L2_CACHE_SIZE: *value = (192 << 20) + phys * 4096; break;
  default: return note(ZACL_ERROR_RT_PARAM_INVALID);
  }
  return ZACL_SUCCESS;
}

/* Only the HBM figures (ACL_HBM_MEM) are emulated. */
int aclrtGetMemInfo(int attr, size_t *free_bytes, size_t *total) {
  size_t used = 0;
  int dev = 0, r;
  if (!free_bytes || !total || attr != ZACL_HBM_MEM)
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  NEED_DEVICE();
  fk_get_device(&dev);
  if ((r = fk_mem_used(dev, &used)))
    return note(r);
  *total = fk_mem_bytes();
  *free_bytes = *total - used;
  return ZACL_SUCCESS;
}

int aclrtSynchronizeDevice(void) {
  NEED_DEVICE();
  return note(fk_device_sync());
}

int aclrtMalloc(void **p, size_t n, int policy) {
  if (!p || !n || policy < 0)
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  NEED_DEVICE();
  return note(fk_malloc(p, n));
}

int aclrtFree(void *p) { return note(fk_free(p)); }

/* The copy's direction: whether each side is device memory. */
static int sides(int kind, int *dst_dev, int *src_dev) {
  switch (kind) {
  case ZACL_MEMCPY_HOST_TO_HOST: *dst_dev = 0, *src_dev = 0; return 0;
  case ZACL_MEMCPY_HOST_TO_DEVICE: *dst_dev = 1, *src_dev = 0; return 0;
  case ZACL_MEMCPY_DEVICE_TO_HOST: *dst_dev = 0, *src_dev = 1; return 0;
  case ZACL_MEMCPY_DEVICE_TO_DEVICE: *dst_dev = 1, *src_dev = 1; return 0;
  default: return -1;
  }
}

int aclrtMemcpy(void *dst, size_t dest_max, const void *src, size_t count, int kind) {
  int dd, sd;
  if (count > dest_max || sides(kind, &dd, &sd))
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  NEED_DEVICE();
  return note(fk_memcpy_sync(dst, src, count, dd, sd));
}

int aclrtMemcpyAsync(void *dst, size_t dest_max, const void *src, size_t count, int kind,
                     zacl_stream_t s) {
  int dd, sd;
  if (count > dest_max || sides(kind, &dd, &sd))
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  return note(fk_memcpy(dst, src, count, dd, sd, S(s)));
}

int aclrtMemsetAsync(void *dst, size_t max_count, int32_t value, size_t count, zacl_stream_t s) {
  if (count > max_count)
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  return note(fk_memset(dst, value, count, S(s)));
}

int aclrtCreateStream(zacl_stream_t *s) {
  NEED_DEVICE();
  return note(fk_stream_create((fk_stream_t **)s));
}

int aclrtDestroyStream(zacl_stream_t s) { return note(fk_stream_destroy(S(s))); }
int aclrtSynchronizeStream(zacl_stream_t s) { return note(fk_stream_sync(S(s))); }
int aclrtStreamWaitEvent(zacl_stream_t s, zacl_event_t e) {
  return note(fk_stream_wait_event(S(s), E(e)));
}

int aclrtCreateEventWithFlag(zacl_event_t *e, uint32_t flag) {
  if (flag & ~(uint32_t)(ZACL_EVENT_SYNC | ZACL_EVENT_TIME_LINE))
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  NEED_DEVICE();
  return note(fk_event_create((fk_event_t **)e, (flag & ZACL_EVENT_TIME_LINE) != 0));
}

int aclrtDestroyEvent(zacl_event_t e) { return note(fk_event_destroy(E(e))); }
int aclrtRecordEvent(zacl_event_t e, zacl_stream_t s) { return note(fk_event_record(E(e), S(s))); }
int aclrtSynchronizeEvent(zacl_event_t e) { return note(fk_event_sync(E(e))); }

int aclrtEventElapsedTime(float *ms, zacl_event_t a, zacl_event_t b) {
  return note(fk_event_elapsed(ms, E(a), E(b)));
}

int aclrtLaunchHostFunc(zacl_stream_t s, zacl_host_fn_t fn, void *args) {
  return note(fk_host_func(S(s), fn, args));
}

/* ---- captured models: the live ones, so a second destroy is caught ---- */

static pthread_mutex_t models_lock = PTHREAD_MUTEX_INITIALIZER;
static void **models;
static size_t nmodels, cap_models;

__attribute__((unused)) static void model_add(void *m) {
  pthread_mutex_lock(&models_lock);
  if (nmodels == cap_models) {
    size_t nc = cap_models ? 2 * cap_models : 16;
    void **nm = realloc(models, nc * sizeof(*nm));
    if (!nm)
      abort();
    models = nm;
    cap_models = nc;
  }
  models[nmodels++] = m;
  pthread_mutex_unlock(&models_lock);
}

/* Removes `m` when `take`; whether it was alive. */
static int model_alive(void *m, int take) {
  int found = 0;
  pthread_mutex_lock(&models_lock);
  for (size_t i = 0; i < nmodels && !found; i++)
    if (models[i] == m) {
      found = 1;
      if (take)
        models[i] = models[--nmodels];
    }
  if (take && !nmodels) {
    free(models);
    models = NULL;
    cap_models = 0;
  }
  pthread_mutex_unlock(&models_lock);
  return found;
}

int zfake_acl_models_live(void) {
  int n;
  pthread_mutex_lock(&models_lock);
  n = (int)nmodels;
  pthread_mutex_unlock(&models_lock);
  return n;
}

int aclmdlRICaptureBegin(zacl_stream_t s, int mode) {
  if (mode < ZACL_CAPTURE_MODE_GLOBAL || mode > ZACL_CAPTURE_MODE_RELAXED)
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  return note(fk_capture_begin(S(s)));
}

int aclmdlRICaptureGetInfo(zacl_stream_t s, int *status, zacl_mdlri_t *model) {
  if (model)
    *model = NULL;
  return note(fk_capture_status(S(s), status));
}

#ifndef FAKE_ACL_OMIT_CAPTURE_END
int aclmdlRICaptureEnd(zacl_stream_t s, zacl_mdlri_t *model) {
  fk_graph_t *g = NULL;
  int r;
  if (!model)
    return note(ZACL_ERROR_RT_PARAM_INVALID);
  r = fk_capture_end(S(s), &g);
  *model = g;
  if (g)
    model_add(g);
  return note(r);
}
#endif

int aclmdlRIExecuteAsync(zacl_mdlri_t model, zacl_stream_t s) {
  if (!model_alive(model, 0))
    return note(ZACL_ERROR_RT_INVALID_HANDLE);
  return note(fk_graph_launch(G(model), S(s)));
}

int aclmdlRIDestroy(zacl_mdlri_t model) {
  if (!model_alive(model, 1)) {
    fprintf(stderr, "fake ACL runtime: aclmdlRIDestroy(%p): not a live model (destroyed twice?)\n",
            model);
    fflush(stderr);
    abort();
  }
  return note(fk_graph_destroy(G(model)));
}
