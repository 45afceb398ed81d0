/* Clocks, temperature, power and clock-event (throttle) reasons through
 * NVML (libnvidia-ml.so.1, dlopen), matched to the CUDA device by UUID:
 * NVML numbers devices in PCI order, CUDA by default fastest first
 * (docs/timing.md, "Clocks"). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_int.h"
#include "zlbench/base.h"

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

/* Event reasons that mean the clocks were held down by power or heat
 * (GpuIdle, application and display settings are not slowdowns). */
static const struct {
  unsigned long long bit;
  const char *name;
} slowdowns[] = {{0x4ull, "sw_power_cap"},       {0x8ull, "hw_slowdown"},
                 {0x20ull, "sw_thermal"},        {0x40ull, "hw_thermal"},
                 {0x80ull, "hw_power_brake"}};

static struct {
  nvmlReturn_t (*init)(void);
  nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
  nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
  nvmlReturn_t (*driver)(char *, unsigned);
  const char *(*error_string)(nvmlReturn_t);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

void zlb__bind(void *h, const char *sym, void *slot, size_t size) {
  void *p = dlsym(h, sym);
  memcpy(slot, &p, size < sizeof(p) ? size : sizeof(p));
}

static void load(void) {
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return;
  zlb__bind(h, "nvmlInit_v2", &api.init, sizeof(api.init));
  zlb__bind(h, "nvmlDeviceGetHandleByUUID", &api.by_uuid, sizeof(api.by_uuid));
  zlb__bind(h, "nvmlDeviceGetClockInfo", &api.clock, sizeof(api.clock));
  zlb__bind(h, "nvmlDeviceGetTemperature", &api.temp, sizeof(api.temp));
  zlb__bind(h, "nvmlDeviceGetPowerUsage", &api.power, sizeof(api.power));
  /* The newer name first; the deprecated one on older drivers. */
  zlb__bind(h, "nvmlDeviceGetCurrentClocksEventReasons", &api.reasons, sizeof(api.reasons));
  if (!api.reasons)
    zlb__bind(h, "nvmlDeviceGetCurrentClocksThrottleReasons", &api.reasons,
              sizeof(api.reasons));
  zlb__bind(h, "nvmlSystemGetDriverVersion", &api.driver, sizeof(api.driver));
  zlb__bind(h, "nvmlErrorString", &api.error_string, sizeof(api.error_string));
  loaded = api.init && api.by_uuid && api.clock && api.init() == 0;
}

void zlb__nvml_driver_version(char *buf, size_t len) {
  char v[96] = {0};
  pthread_once(&once, load);
  if (loaded && api.driver && api.driver(v, sizeof(v)) == 0)
    zlb_strlcpy(buf, v, len);
}

int zlb__nvml_clocks(const char *uuid, zlb_clocks_t *out, zlb_error_t *err) {
  nvmlDevice_t dev;
  nvmlReturn_t r;
  unsigned v;
  memset(out, 0, sizeof(*out));
  out->sm_mhz = out->mem_mhz = out->temp_c = out->power_mw = -1;
  pthread_once(&once, load);
  if (!loaded)
    return zlb_error_set(err, ZLB_EUNAVAIL, "NVML (libnvidia-ml.so.1) is not available");
  if ((r = api.by_uuid(uuid, &dev)) != 0)
    return zlb_error_vendor(err, ZLB_EDEVICE, r, "NVML_ERROR",
                            "nvmlDeviceGetHandleByUUID(%s): %s", uuid,
                            api.error_string ? api.error_string(r) : "error");
  if (api.clock(dev, NVML_CLOCK_SM, &v) == 0)
    out->sm_mhz = (int)v;
  if (api.clock(dev, NVML_CLOCK_MEM, &v) == 0)
    out->mem_mhz = (int)v;
  if (api.temp && api.temp(dev, NVML_TEMPERATURE_GPU, &v) == 0)
    out->temp_c = (int)v;
  if (api.power && api.power(dev, &v) == 0)
    out->power_mw = (int)v;
  if (api.reasons && api.reasons(dev, &out->reasons) == 0) {
    zlb_strbuf_t why = ZLB_STRBUF_INIT;
    for (size_t i = 0; i < sizeof(slowdowns) / sizeof(slowdowns[0]); i++)
      if (out->reasons & slowdowns[i].bit)
        zlb_strbuf_addf(&why, "%s%s", why.len ? "," : "", slowdowns[i].name);
    out->throttled = why.len > 0;
    zlb_strlcpy(out->why, why.buf, sizeof(out->why));
    zlb_strbuf_release(&why);
  }
  return 0;
}
