/* Registry entry for MUSA: runtime libraries, visibility keys,
 * capabilities and error classification (docs/architecture.md, device
 * layer). Its runtime implementation comes later; selecting it on a machine
 * without its runtime names the libraries looked for. (ROCm's and Ascend's
 * entries are with their runtimes, in hip.c and acl.c.) */
#include <stddef.h>

#include "device_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Moore Threads MUSA: the CUDA numbering, musa* names ------------- */

static const char *const musa_aliases[] = {"mthreads", "mt", "moore", NULL};
static const char *const musa_sonames[] = {
    "libmusart.so", "libmusart.so.5", "libmusart.so.4", "libmusart.so.1.5",
    "/usr/local/musa/lib/libmusart.so", NULL};
static const zlb_classify_entry_t musa_classify[] = {
    {900, "musaErrorStreamCaptureUnsupported", ZLB_VERDICT_REFUSED},
    {901, "musaErrorStreamCaptureInvalidated", ZLB_VERDICT_REFUSED},
    {902, "musaErrorStreamCaptureMerge", ZLB_VERDICT_REFUSED},
    {903, "musaErrorStreamCaptureUnmatched", ZLB_VERDICT_REFUSED},
    {904, "musaErrorStreamCaptureUnjoined", ZLB_VERDICT_REFUSED},
    {905, "musaErrorStreamCaptureIsolation", ZLB_VERDICT_REFUSED},
    {906, "musaErrorStreamCaptureImplicit", ZLB_VERDICT_REFUSED},
    {907, "musaErrorCapturedEvent", ZLB_VERDICT_REFUSED},
    {908, "musaErrorStreamCaptureWrongThread", ZLB_VERDICT_REFUSED},
    {801, "musaErrorNotSupported", ZLB_VERDICT_REFUSED},
    {700, "musaErrorIllegalAddress", ZLB_VERDICT_FATAL},
    {714, "musaErrorHardwareStackError", ZLB_VERDICT_FATAL},
    {715, "musaErrorIllegalInstruction", ZLB_VERDICT_FATAL},
    {716, "musaErrorMisalignedAddress", ZLB_VERDICT_FATAL},
    {717, "musaErrorInvalidAddressSpace", ZLB_VERDICT_FATAL},
    {718, "musaErrorInvalidPc", ZLB_VERDICT_FATAL},
    {719, "musaErrorLaunchFailure", ZLB_VERDICT_FATAL},
};

const zlb_backend_desc_t zlb__backend_musa = {
    .name = "musa",
    .vendor = "Moore Threads",
    .aliases = musa_aliases,
    .sonames = musa_sonames,
    .visibility_env = "MUSA_VISIBLE_DEVICES",
    /* Graphs exist (MUSAGraph) but are not reliable enough to time with:
     * the seed keeps every non-CUDA backend on the direct timer. */
    .caps = ZLB_CAP_EVENTS | ZLB_CAP_RNG_STATE | ZLB_CAP_ASYNC | ZLB_CAP_L2_FLUSH,
    .classify = musa_classify,
    .nclassify = N(musa_classify),
    .flush_bytes = 256000000u, /* musa_testing's 256e6-byte buffer */
    .vtbl = NULL,
    .probe_in_auto = 1,
};
