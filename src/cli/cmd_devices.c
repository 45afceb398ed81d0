/* `zlbench devices`: backends, their devices and capability flags. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "zlbench/device.h"
#include "zlbench/json.h"
#include "zlbench/ops.h"

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fprintf(f, "usage: zlbench devices [--backend NAME] [--count] [--json] [--lib PATH]\n\n"
             "For every backend (or the one named): whether its runtime loads here,\n"
             "its visibility variable and capability flags, and each visible device.\n\n"
             "options:\n");
  zlb_cli_help(f, opts);
  fprintf(f, "\nexit codes: 0, 2 usage error, 3 the named backend is unavailable\n");
}

static void show(const zlb_backend_desc_t *d, zlb_jw_t *jw, int *avail_out) {
  zlb_backend_t *b = NULL;
  zlb_error_t e = ZLB_ERROR_INIT, te = ZLB_ERROR_INIT;
  char caps[128];
  int n = 0;
  if (!zlb_backend_open(d, &b, &e))
    b->v->device_count(b, &n, &e);
  *avail_out = b && !e.code;
  /* An opened backend's capabilities are what its runtime allows here
   * (a tracer may be missing); otherwise the registry's. */
  zlb_caps_format(*avail_out ? zlb_backend_caps(b, &te) : d->caps, caps, sizeof(caps));
  if (jw) {
    zlb_jw_object_begin(jw);
    zlb_jw_key_string(jw, "backend", d->name);
    zlb_jw_key_string(jw, "vendor", d->vendor);
    zlb_jw_key_string(jw, "visibility_env", d->visibility_env);
    zlb_jw_key_array(jw, "also_env");
    for (const char *const *k = d->also_env; k && *k; k++)
      zlb_jw_string(jw, *k);
    zlb_jw_array_end(jw);
    zlb_jw_key_string(jw, "capabilities", caps);
    zlb_jw_key_bool(jw, "available", *avail_out);
    zlb_jw_key_string(jw, "error", e.code ? e.msg : NULL);
    if (te.code)
      zlb_jw_key_string(jw, "trace_error", te.msg);
    zlb_jw_key_array(jw, "devices");
  } else {
    printf("%s (%s)  capabilities=%s  visibility=%s\n", d->name, d->vendor, caps,
           d->visibility_env ? d->visibility_env : "-");
    if (e.code)
      printf("  unavailable: %s\n", e.msg);
    if (te.code)
      printf("  no trace: %s\n", te.msg);
  }
  for (int i = 0; *avail_out && i < n; i++) {
    zlb_device_info_t info;
    zlb_error_t ie = ZLB_ERROR_INIT;
    if (b->v->device_info(b, i, &info, &ie)) {
      if (!jw)
        printf("  [%d] %s\n", i, ie.msg);
      continue;
    }
    if (jw) {
      zlb_jw_object_begin(jw);
      zlb_jw_key_int(jw, "index", i);
      zlb_jw_key_string(jw, "name", info.name);
      zlb_jw_key_string(jw, "uuid", info.uuid);
      zlb_jw_key_string(jw, "pci_bus_id", info.pci_bus_id);
      zlb_jw_key_string(jw, "driver_version", info.driver_version);
      zlb_jw_key_string(jw, "runtime_version", info.runtime_version);
      zlb_jw_key_int(jw, "sm_count", info.sm_count);
      zlb_jw_key_int(jw, "memory_bytes", (long long)info.mem_bytes);
      zlb_jw_key_int(jw, "l2_bytes", (long long)info.l2_bytes);
      zlb_jw_object_end(jw);
    } else {
      printf("  [%d] %s  uuid=%s  units=%d  memory=%.1f GiB  l2=%.1f MiB  driver=%s\n", i,
             info.name, info.uuid[0] ? info.uuid : "-", info.sm_count,
             (double)info.mem_bytes / (1 << 30), (double)info.l2_bytes / (1 << 20),
             info.driver_version);
    }
  }
  if (jw) {
    zlb_jw_array_end(jw);
    zlb_jw_object_end(jw);
  }
  zlb_backend_close(b);
}

int zlb_cmd_devices(int argc, char **argv) {
  const char *name = NULL;
  int count = 0, json = 0, avail = 0, code = ZLB_EXIT_OK;
  zlb_strvec_t args = ZLB_STRVEC_INIT, libs = ZLB_STRVEC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_op_set_t set = ZLB_OP_SET_INIT;
  zlb_backend_t *b = NULL;
  zlb_jw_t jw;

  zlb_jw_init(&jw, 1);
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_BACKEND(&name, "one backend (aliases and auto accepted)"),
        ZLB_CLI_FLAG("--count", &count,
                     "print only the number of visible devices of that backend"),
        ZLB_CLI_FLAG("--json", &json, "machine-readable output"),
        ZLB_CLI_LIB(&libs),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("devices", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      goto out;
    case ZLB_CLI_BAD:
      goto usage_error;
    default:
      break;
    }
  }
  if (args.n) {
    zlb_cli_errorf("unexpected argument '%s' for 'zlbench devices' (see zlbench devices --help)",
                   args.v[0]);
    goto usage_error;
  }
  /* A library may add a backend: load them before looking the name up. */
  for (size_t i = 0; i < libs.n; i++)
    if (zlb_ops_load_library(&set, libs.v[i], &err)) {
      code = zlb_cli_fail(&err);
      goto out;
    }
  if (zlb_ops_load_env(&set, &err)) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  if (count && json) {
    /* --count prints "NAME N", which batch reads: not JSON. */
    zlb_cli_errorf("devices: --count and --json are alternatives (--json lists every "
                   "device with its count)");
    code = ZLB_EXIT_USAGE;
    goto out;
  }
  if (count) {
    int n = 0;
    if (zlb_backend_open_name(name, &b, &err) || b->v->device_count(b, &n, &err)) {
      code = zlb_cli_fail(&err);
      goto out;
    }
    printf("%s %d\n", b->desc->name, n);
    goto out;
  }
  if (json)
    zlb_jw_array_begin(&jw);
  if (name && strcmp(name, "auto")) {
    const zlb_backend_desc_t *d;
    if (zlb_backend_lookup(name, &d, &err)) {
      code = zlb_cli_fail(&err);
      goto out;
    }
    show(d, json ? &jw : NULL, &avail);
  } else {
    for (size_t i = 0; i < zlb_backend_count(); i++) {
      int a = 0;
      show(zlb_backend_at(i), json ? &jw : NULL, &a);
      avail |= a;
    }
  }
  if (json) {
    zlb_jw_array_end(&jw);
    fputs(jw.out.buf, stdout);
  }
  if (name && strcmp(name, "auto") && !avail)
    code = ZLB_EXIT_UNAVAIL;
  goto out;
usage_error:
  code = ZLB_EXIT_USAGE;
out:
  zlb_backend_close(b);
  zlb_jw_release(&jw);
  zlb_op_set_release(&set);
  zlb_strvec_release(&args);
  zlb_strvec_release(&libs);
  return code;
}
