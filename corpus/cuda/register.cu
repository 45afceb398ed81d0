/* The one exported symbol of libzlb_ops_cuda.so: registers every CUDA
 * operator, family by family. */
#include "common.cuh"

extern "C" ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r) {
  typedef int (*family_fn)(zlb_op_registrar_t *);
  static const family_fn families[] = {
      zlbc_register_unary,  zlbc_register_binary, zlbc_register_reduce,
      zlbc_register_norm,   zlbc_register_softmax, zlbc_register_scan,
      zlbc_register_sort,   zlbc_register_random, zlbc_register_blas,
      zlbc_register_movement,
  };
  if (!r || r->abi_version != ZLB_OP_ABI_VERSION)
    return ZLB_EINVAL;
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
    int rc = families[i](r);
    if (rc)
      return rc;
  }
  return 0;
}
