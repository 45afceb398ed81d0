/* Sharding: operators to devices and to hosts by a stable hash, and the
 * host shard from a flag, Slurm or a Kubernetes Indexed Job
 * (docs/batch.md, "Devices and shards"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/batch.h"

int zlb_shard_device(const char *op, int ndevices) {
  if (ndevices <= 1)
    return 0;
  return (int)(zlb_fnv1a64(op) % (uint64_t)ndevices);
}

/* The high half of the hash: independent of the device slot, so a host
 * shard still spreads over all its devices. */
int zlb_shard_host(const char *op, int count) {
  if (count <= 1)
    return 0;
  return (int)((zlb_fnv1a64(op) >> 32) % (uint64_t)count);
}

static int env_long(const char *name, long *out) {
  const char *v = getenv(name);
  return v && *v && !zlb_parse_long(v, out);
}

int zlb_shard_resolve(const char *flag, int *index, int *count, char *source, size_t len,
                      zlb_error_t *err) {
  long i, n, min, step = 1, procid, ntasks;
  *index = 0;
  *count = 1;
  snprintf(source, len, "none");
  if (flag) {
    if (sscanf(flag, "%ld/%ld", &i, &n) != 2 || n < 1 || i < 0 || i >= n)
      return zlb_error_set(err, ZLB_EINVAL,
                           "invalid --shard '%s': expected I/N with 0 <= I < N", flag);
    *index = (int)i;
    *count = (int)n;
    snprintf(source, len, "--shard");
    return 0;
  }
  if (env_long("SLURM_ARRAY_TASK_ID", &i) && env_long("SLURM_ARRAY_TASK_COUNT", &n)) {
    long max = 0;
    if (!env_long("SLURM_ARRAY_TASK_MIN", &min))
      min = 0;
    env_long("SLURM_ARRAY_TASK_STEP", &step);
    if (step < 1)
      step = 1;
    /* An array like 1,3,7 has ids that are not ordinals: refuse it. */
    if (env_long("SLURM_ARRAY_TASK_MAX", &max) && (max - min) / step + 1 != n)
      return zlb_error_set(err, ZLB_EINVAL,
                           "Slurm array ids %ld..%ld step %ld do not form %ld consecutive "
                           "shards; use --array=0-%ld or pass --shard",
                           min, max, step, n, n - 1);
    *index = (int)((i - min) / step);
    *count = (int)n;
    if (env_long("SLURM_NTASKS", &ntasks) && ntasks > 1 && env_long("SLURM_PROCID", &procid)) {
      *index = *index * (int)ntasks + (int)procid;
      *count = *count * (int)ntasks;
    }
    snprintf(source, len, "slurm-array");
  } else if (env_long("SLURM_PROCID", &procid) && env_long("SLURM_NTASKS", &ntasks)) {
    *index = (int)procid;
    *count = (int)ntasks;
    snprintf(source, len, "slurm-tasks");
  } else if (env_long("JOB_COMPLETION_INDEX", &i)) {
    /* Kubernetes injects the index but not the total. */
    if (!env_long("ZL_SHARD_COUNT", &n))
      return zlb_error_set(err, ZLB_EINVAL,
                           "JOB_COMPLETION_INDEX is set but the shard count is not: set "
                           "ZL_SHARD_COUNT to the Job's completions");
    *index = (int)i;
    *count = (int)n;
    snprintf(source, len, "kubernetes");
  }
  if (*count < 1 || *index < 0 || *index >= *count)
    return zlb_error_set(err, ZLB_EINVAL, "shard %d of %d is out of range (%s)", *index,
                         *count, source);
  return 0;
}
