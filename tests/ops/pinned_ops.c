/* Operators of the "test2" and "test3" backends that record the device their child was
 * pinned to, so a batch test can check every operator ran on the device
 * slot the hash assigns it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_int.h"

/* $ZL_TEST_STATE_DIR/<op>.seen: "<ZL_TEST2_VISIBLE_DEVICES> <ZL_TEST2_ALSO_VISIBLE>
 * <selected device index>", "-" for an unset variable. */
static void record_seen(const char *op) {
  const char *dir = getenv("ZL_TEST_STATE_DIR");
  const char *vis = getenv("ZL_TEST2_VISIBLE_DEVICES");
  const char *also = getenv("ZL_TEST2_ALSO_VISIBLE");
  char path[1024];
  FILE *f;
  if (!dir)
    return;
  snprintf(path, sizeof(path), "%s/%s.seen", dir, op);
  if ((f = fopen(path, "w"))) {
    fprintf(f, "%s %s %d\n", vis ? vis : "-", also ? also : "-", zlb_test_selected_device);
    fclose(f);
  }
}

static int init_pinned(zlb_env_t *env, zlb_case_t *c, const char *op) {
  (void)env;
  record_seen(op);
  zlb_test_copy_case(c, "pinned", ZLB_CHECK_CLOSE);
  return 0;
}

static int enqueue_copy(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0], *y = &c->out[which][0];
  (void)env;
  (void)stream;
  for (int64_t i = 0; i < x->numel; i++)
    zlb_store(y->dtype, y->data, i, zlb_load(x->dtype, x->data, i));
  return 0;
}

#define PIN_OP_FOR(NAME, BACKEND)                                                \
  static int init_##NAME(zlb_env_t *env, zlb_case_t *c) {                        \
    return init_pinned(env, c, #NAME);                                           \
  }                                                                              \
  ZLB_TEST_OP_DESC(NAME, BACKEND, ZLB_DT_BIT(ZLB_DT_FLOAT32),                    \
                   "test operator " #NAME ": records its visible device", init_##NAME, \
                   enqueue_copy, NULL, enqueue_copy)

#define PIN_OP(NAME) PIN_OP_FOR(NAME, "test2")

/* Over three devices the hash puts two of them on each. */
PIN_OP(pin_a)
PIN_OP(pin_b)
PIN_OP(pin_c)
PIN_OP(pin_d)
PIN_OP(pin_e)
PIN_OP(pin_f)
PIN_OP_FOR(pin_none, "test3")

int zlb_test_register_pinned(zlb_op_registrar_t *r) {
  const zlb_op_t *all[] = {&op_pin_a, &op_pin_b, &op_pin_c, &op_pin_d, &op_pin_e, &op_pin_f,
                           &op_pin_none};
  int rc = 0;
  for (size_t i = 0; !rc && i < sizeof(all) / sizeof(all[0]); i++)
    rc = r->add_op(r, all[i]);
  return rc;
}
