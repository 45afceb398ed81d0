/* Shared by the unit tests: cmocka and small helpers. */
#ifndef ZLB_TEST_H
#define ZLB_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#ifndef ZLB_TEST_DATA
#define ZLB_TEST_DATA "tests/data"
#endif

#define assert_str_contains(hay, needle)                                         \
  do {                                                                           \
    if (!strstr((hay), (needle)))                                                \
      fail_msg("'%s' does not contain '%s'", (hay), (needle));                   \
  } while (0)

#endif
