/* Entry point of libzlb_ops_host.so, the host operator corpus: the one
 * exported symbol, registering every family's operators. */
#include "host_int.h"

ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r);

ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r) {
  static int (*const families[])(zlb_op_registrar_t *) = {
      zlb__host_register_pointwise, zlb__host_register_reduction,
      zlb__host_register_norm,      zlb__host_register_softmax,
      zlb__host_register_scan,      zlb__host_register_sort,
      zlb__host_register_random,    zlb__host_register_blas,
      zlb__host_register_data_movement,
  };
  size_t i;
  int rc;
  /* a registrar of another ABI may lay out add_op elsewhere: do not call it */
  if (!r || r->abi_version != ZLB_OP_ABI_VERSION || !r->add_op)
    return ZLB_EINVAL;
  for (i = 0; i < sizeof families / sizeof families[0]; i++)
    if ((rc = families[i](r)) != 0)
      return rc;
  return 0;
}
