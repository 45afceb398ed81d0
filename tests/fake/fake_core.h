/* The emulated device behind the fake vendor runtimes (tests/fake/): a
 * vendor-neutral core that a thin shim per vendor exports under the
 * vendor's library name, symbols and error codes (fake_hip.c for ROCm,
 * fake_acl.c for Ascend, fake_musa.c for MUSA).
 *
 * Emulated: devices (a physical count, the vendor's visibility variables
 * masking and renumbering them), a per-thread current device, memory
 * (malloc with an allocation table: a device access outside every
 * allocation is a device fault), streams (one worker thread each, running
 * a FIFO of memsets, copies, host functions, event records, event waits and
 * 32-bit value waits), events stamped with CLOCK_MONOTONIC when the worker
 * reaches them, stream capture (work enqueued on a capturing stream is
 * recorded; instantiating copies it, launching enqueues the copy), and a
 * sticky error: after a device fault every later call returns it.
 *
 * Environment (read once, at the first call):
 *   ZL_FAKE_DEVICES=N        physical devices (default 2)
 *   ZL_FAKE_NO_DEVICE=1      the runtime loads but finds no device
 *   ZL_FAKE_MEM_BYTES=N      memory per device (default 1 GiB): beyond it
 *                            allocations fail with out-of-memory
 *   ZL_FAKE_OP_US=N          every device operation takes N µs more
 *   ZL_FAKE_FAULT=illegal|lost|abort
 *                            what a device fault does: a sticky illegal
 *                            address (default), a lost context, or an abort
 *                            of the process with the vendor's GPU memory
 *                            fault message, as ROCr does
 *   ZL_FAKE_FAULT_AT=N       the N-th host function run faults (1-based)
 *   ZL_FAKE_CAPTURE=unsupported|invalidate|poison
 *                            capture: work enqueued while capturing is
 *                            refused (and the capture invalidated); end
 *                            capture reports the capture invalidated; or
 *                            that and the context lost as well
 */
#ifndef ZLB_FAKE_CORE_H
#define ZLB_FAKE_CORE_H

#include <stddef.h>
#include <stdint.h>

/* What a vendor shim tells the core: its codes and its variables. */
typedef struct fk_vendor {
  const char *name;                  /* "hip" */
  /* Applied in order, each renumbering what is left; "A|B" is the first of
   * A and B that is set. */
  const char *const *visibility_env;
  const char *fault_message;         /* printed before abort() ("%d" node, "%p" address) */
  /* The visibility lists must be ascending: an entry not above the one
   * before it ends the list, as a repeated one does. */
  int visibility_ascending;
  int ok, invalid_value, out_of_memory, no_device, init_no_device, invalid_device,
      invalid_handle, not_ready, illegal_address, context_lost, not_supported,
      capture_unsupported, capture_invalidated, capture_unmatched;
} fk_vendor_t;

typedef struct fk_stream fk_stream_t;
typedef struct fk_event fk_event_t;
typedef struct fk_graph fk_graph_t;

/* Every entry returns 0 (the vendor's success) or a vendor code. */
void fk_setup(const fk_vendor_t *v);
int fk_init(void);
int fk_device_count(int *n);
/* The physical index behind a visible ordinal, or -1. */
int fk_physical(int ordinal);
int fk_set_device(int ordinal);
int fk_get_device(int *ordinal);
/* Whether this thread has set a device (fk_set_device); without one,
 * fk_get_device says 0. */
int fk_device_is_set(void);
size_t fk_mem_bytes(void);
int fk_mem_used(int ordinal, size_t *used);

int fk_malloc(void **p, size_t bytes);
int fk_free(void *p);
int fk_host_alloc(void **p, size_t bytes);
int fk_host_free(void *p);
/* Whether `p` is the start of a host allocation (fk_host_alloc). */
int fk_host_mapped(const void *p);

int fk_stream_create(fk_stream_t **s);
int fk_stream_destroy(fk_stream_t *s);
int fk_stream_sync(fk_stream_t *s);
int fk_device_sync(void);
int fk_memset(void *dst, int value, size_t n, fk_stream_t *s);
int fk_memcpy(void *dst, const void *src, size_t n, int dst_device, int src_device,
              fk_stream_t *s);
/* A synchronous copy: refused while this thread captures. */
int fk_memcpy_sync(void *dst, const void *src, size_t n, int dst_device, int src_device);
int fk_host_func(fk_stream_t *s, void (*fn)(void *), void *arg);
int fk_wait_value32(fk_stream_t *s, uint32_t *addr, uint32_t value, uint32_t mask);

int fk_event_create(fk_event_t **e, int timing);
int fk_event_destroy(fk_event_t *e);
int fk_event_record(fk_event_t *e, fk_stream_t *s);
int fk_event_sync(fk_event_t *e);
int fk_event_elapsed(float *ms, fk_event_t *start, fk_event_t *end);
int fk_stream_wait_event(fk_stream_t *s, fk_event_t *e);

int fk_capture_begin(fk_stream_t *s);
int fk_capture_end(fk_stream_t *s, fk_graph_t **g);
int fk_capture_status(fk_stream_t *s, int *status); /* 0 none, 1 active, 2 invalidated */
int fk_graph_instantiate(fk_graph_t **exec, fk_graph_t *g);
int fk_graph_launch(fk_graph_t *exec, fk_stream_t *s);
int fk_graph_destroy(fk_graph_t *g);

/* The sticky error (0 when none). */
int fk_sticky(void);

/* Called on a stream's worker after each host function it ran (the test
 * operators' kernels) with the stream's device ordinal and the function's
 * begin and end in CLOCK_MONOTONIC ns, the clock of the fake tracers'
 * timestamps; NULL stops the calls. fake_hip.c exports it to the fake
 * libroctracer64 as zlFakeHipSetKernelHook. */
typedef void (*fk_kernel_hook_t)(int device, uint64_t begin_ns, uint64_t end_ns);
void fk_set_kernel_hook(fk_kernel_hook_t hook);
void zlFakeHipSetKernelHook(fk_kernel_hook_t hook);

#endif
