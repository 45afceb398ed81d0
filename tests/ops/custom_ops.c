/* An operator with its own check (ZLB_CHECK_CUSTOM) made both ways:
 * compare() on host copies and compare_device() on the tensors in place,
 * with the same verdict and message. The test backend's memory is host
 * memory behind a device-like interface, so the "device" compare reads
 * the tensors directly; like the backend's device checks it is on only
 * with ZL_TEST_DEVCHECK=1 and logs each call to ZL_TEST_DEVCHECK_LOG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_int.h"

static int custom_init(zlb_env_t *env, zlb_case_t *c) {
  (void)env;
  zlb_test_copy_case(c, "custom", ZLB_CHECK_CUSTOM);
  return 0;
}

static int custom_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0], *y = &c->out[which][0];
  (void)env;
  (void)stream;
  memcpy(y->data, x->data, (size_t)x->numel * zlb_dtype_size(x->dtype));
  return 0;
}

/* The judgement both compares share: the first element where the
 * candidate differs from the baseline. */
static int judge(const zlb_case_t *c, const void *b, const void *x, char *msg, size_t len) {
  const zlb_tensor_t *t = &c->out[ZLB_CANDIDATE][0];
  size_t es = zlb_dtype_size(t->dtype);
  for (int64_t i = 0; i < t->numel; i++)
    if (memcmp((const char *)b + (size_t)i * es, (const char *)x + (size_t)i * es, es)) {
      snprintf(msg, len, "custom: element %lld: candidate %g, baseline %g", (long long)i,
               zlb_load(t->dtype, x, i), zlb_load(t->dtype, b, i));
      return 1;
    }
  return 0;
}

static int custom_compare(zlb_env_t *env, const zlb_case_t *c, const zlb_host_view_t *v,
                          char *msg, size_t len) {
  (void)env;
  return judge(c, v->out[ZLB_BASELINE][0], v->out[ZLB_CANDIDATE][0], msg, len);
}

static int custom_compare_device(zlb_env_t *env, const zlb_case_t *c, void *stream, char *msg,
                                 size_t len) {
  const char *on = getenv("ZL_TEST_DEVCHECK"), *logp = getenv("ZL_TEST_DEVCHECK_LOG");
  (void)stream;
  if (!on || strcmp(on, "1")) {
    snprintf(env->errbuf, env->errlen, "test backend: device checks are off");
    return ZLB_EUNSUPPORTED;
  }
  if (logp) {
    FILE *f = fopen(logp, "a");
    if (f) {
      fprintf(f, "compare_device %lld\n", (long long)c->out[ZLB_CANDIDATE][0].numel);
      fclose(f);
    }
  }
  return judge(c, c->out[ZLB_BASELINE][0].data, c->out[ZLB_CANDIDATE][0].data, msg, len)
             ? ZLB_EMISMATCH
             : 0;
}

static const zlb_op_t op_custom_check = {
    .abi_version = ZLB_OP_ABI_VERSION,
    .name = "custom_check",
    .family = "test",
    .backend = "test",
    .dtypes = ZLB_DT_FLOATS,
    .shape_desc = "N",
    .doc = "copy judged by its own compare(), on the host and on the device",
    .case_init = custom_init,
    .compare = custom_compare,
    .baseline = {"ref", 0, NULL, custom_enqueue, NULL},
    .candidate = {"test", 0, NULL, custom_enqueue, NULL},
    .compare_device = custom_compare_device,
};

/* setup_probe: custom_check with a once-per-process setup() that appends
 * "setup DTYPEMASK" to ZL_TEST_SETUP_LOG and fails when ZL_TEST_SETUP_FAIL
 * is 1; each case appends "case" there, so the order shows. */
static void probe_log(const char *line) {
  const char *p = getenv("ZL_TEST_SETUP_LOG");
  FILE *f = p ? fopen(p, "a") : NULL;
  if (f) {
    fprintf(f, "%s\n", line);
    fclose(f);
  }
}

static int probe_setup(zlb_env_t *env, uint32_t dtypes) {
  const char *fail = getenv("ZL_TEST_SETUP_FAIL");
  char line[64];
  snprintf(line, sizeof(line), "setup %u", (unsigned)dtypes);
  probe_log(line);
  if (fail && !strcmp(fail, "1")) {
    snprintf(env->errbuf, env->errlen, "injected set-up failure");
    return ZLB_EOP;
  }
  return 0;
}

static int probe_init(zlb_env_t *env, zlb_case_t *c) {
  probe_log("case");
  return custom_init(env, c);
}

static const zlb_op_t op_setup_probe = {
    .abi_version = ZLB_OP_ABI_VERSION,
    .name = "setup_probe",
    .family = "test",
    .backend = "test",
    .dtypes = ZLB_DT_FLOATS,
    .shape_desc = "N",
    .doc = "copy with a once-per-process setup()",
    .case_init = probe_init,
    .compare = custom_compare,
    .baseline = {"ref", 0, NULL, custom_enqueue, NULL},
    .candidate = {"test", 0, NULL, custom_enqueue, NULL},
    .setup = probe_setup,
};

int zlb_test_register_custom(zlb_op_registrar_t *r) {
  int rc = r->add_op(r, &op_custom_check);
  return rc ? rc : r->add_op(r, &op_setup_probe);
}
