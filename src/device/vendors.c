/* Registry entry for Ascend: runtime libraries, visibility keys,
 * capabilities and error classification (docs/architecture.md, device
 * layer). Its runtime implementation comes later; selecting it on a machine
 * without its runtime names the libraries looked for. (ROCm's and MUSA's
 * entries are with their runtimes, in hip.c and musa.c.) */
#include <stddef.h>

#include "device_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Huawei Ascend (ACL) -------------------------------------------------- */

static const char *const ascend_aliases[] = {"npu", "huawei", "cann", NULL};
static const char *const ascend_sonames[] = {
    "libascendcl.so", "/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so",
    NULL};
static const char *const ascend_also_env[] = {"NPU_VISIBLE_DEVICES", NULL};
static const zlb_classify_entry_t ascend_classify[] = {
    {107024, "ACL_ERROR_RT_CAPTURE_DEPENDENCY", ZLB_VERDICT_REFUSED},
    {107025, "ACL_ERROR_RT_STREAM_UNJOINED", ZLB_VERDICT_REFUSED},
    {107026, "ACL_ERROR_RT_MODEL_CAPTURED", ZLB_VERDICT_REFUSED},
    {107027, "ACL_ERROR_RT_STREAM_CAPTURED", ZLB_VERDICT_REFUSED},
    {107028, "ACL_ERROR_RT_EVENT_CAPTURED", ZLB_VERDICT_REFUSED},
    {107029, "ACL_ERROR_RT_STREAM_NOT_CAPTURED", ZLB_VERDICT_REFUSED},
    {107030, "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT", ZLB_VERDICT_REFUSED},
    {107031, "ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT", ZLB_VERDICT_REFUSED},
    {107032, "ACL_ERROR_STREAM_CAPTURE_CONFLICT", ZLB_VERDICT_REFUSED},
    {107033, "ACL_ERROR_STREAM_TASK_GROUP_STATUS", ZLB_VERDICT_REFUSED},
    {107034, "ACL_ERROR_STREAM_TASK_GROUP_INTR", ZLB_VERDICT_REFUSED},
    {107036, "ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED", ZLB_VERDICT_REFUSED},
    {107038, "ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD", ZLB_VERDICT_REFUSED},
    {107040, "ACL_ERROR_RT_MODEL_UPDATE_FAILED", ZLB_VERDICT_REFUSED},
    {107041, "ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC", ZLB_VERDICT_REFUSED},
    {107045, "ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING", ZLB_VERDICT_REFUSED},
    {507903, "ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED", ZLB_VERDICT_REFUSED},
    {207000, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT", ZLB_VERDICT_REFUSED},
    {507011, "ACL_ERROR_RT_MODEL_EXECUTE", ZLB_VERDICT_FATAL},
    {507013, "ACL_ERROR_RT_SYS_DMA", ZLB_VERDICT_FATAL},
    {507014, "ACL_ERROR_RT_AICORE_TIMEOUT", ZLB_VERDICT_FATAL},
    {507015, "ACL_ERROR_RT_AICORE_EXCEPTION", ZLB_VERDICT_FATAL},
    {507016, "ACL_ERROR_RT_AICORE_TRAP_EXCEPTION", ZLB_VERDICT_FATAL},
    {507017, "ACL_ERROR_RT_AICPU_TIMEOUT", ZLB_VERDICT_FATAL},
    {507018, "ACL_ERROR_RT_AICPU_EXCEPTION", ZLB_VERDICT_FATAL},
    {507034, "ACL_ERROR_RT_VECTOR_CORE_TIMEOUT", ZLB_VERDICT_FATAL},
    {507035, "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION", ZLB_VERDICT_FATAL},
    {507036, "ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION", ZLB_VERDICT_FATAL},
    {507042, "ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW", ZLB_VERDICT_FATAL},
    {507043, "ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW", ZLB_VERDICT_FATAL},
    {507053, "ACL_ERROR_RT_DEVICE_MEM_ERROR", ZLB_VERDICT_FATAL},
    {507054, "ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR", ZLB_VERDICT_FATAL},
    {507010, "ACL_ERROR_RT_LOST_HEARTBEAT", ZLB_VERDICT_POISONED},
    {507000, "ACL_ERROR_RT_INTERNAL_ERROR", ZLB_VERDICT_POISONED},
    {107022, "ACL_ERROR_RT_DEVICE_TASK_ABORT", ZLB_VERDICT_POISONED},
    {107023, "ACL_ERROR_RT_STREAM_ABORT", ZLB_VERDICT_POISONED},
};

const zlb_backend_desc_t zlb__backend_ascend = {
    .name = "ascend",
    .vendor = "Huawei",
    .aliases = ascend_aliases,
    .sonames = ascend_sonames,
    .visibility_env = "ASCEND_RT_VISIBLE_DEVICES",
    .also_env = ascend_also_env,
    .caps = ZLB_CAP_EVENTS | ZLB_CAP_RNG_STATE | ZLB_CAP_ASYNC | ZLB_CAP_L2_FLUSH,
    .classify = ascend_classify,
    .nclassify = N(ascend_classify),
    .flush_bytes = 192u << 20, /* Ascend's driver cache is 192 MiB */
    .vtbl = NULL,
    .probe_in_auto = 1,
};
