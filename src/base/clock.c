/* Monotonic clock, wall-clock stamps and the stable hash. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "zlbench/base.h"

uint64_t zlb_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double zlb_now_s(void) { return (double)zlb_now_ns() * 1e-9; }

double zlb_epoch_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void zlb_iso8601_now(char *buf, size_t len) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void zlb_timestamp_compact(char *buf, size_t len) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  localtime_r(&ts.tv_sec, &tm);
  strftime(buf, len, "%Y%m%d-%H%M%S", &tm);
}

void zlb_sleep_ms(double ms) {
  struct timespec ts, rem;
  if (ms <= 0)
    return;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
    ts = rem;
}

uint64_t zlb_fnv1a64_add(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t zlb_fnv1a64(const char *s) { return zlb_fnv1a64_add(ZLB_FNV1A64_BASIS, s, strlen(s)); }
