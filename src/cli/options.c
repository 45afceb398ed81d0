/* The table-driven option parser every subcommand uses, and the options part
 * of --help generated from the same tables. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Column where the help text starts ("  --name ARG" is padded to it). */
#define HELP_COL 24

int zlb_cli_bad_value(const char *opt, const char *value, const char *want) {
  zlb_cli_errorf("invalid value '%s' for %s: expected %s", value, opt, want);
  return -1;
}

int zlb_cli_word_in(const char *opt, const char *value, const char *const *words,
                    const char *want, int *out) {
  for (int i = 0; words[i]; i++)
    if (!strcmp(value, words[i])) {
      *out = i;
      return 0;
    }
  return zlb_cli_bad_value(opt, value, want);
}

int zlb_cli_long_in(const char *opt, const char *value, long lo, long hi, const char *want,
                    long *out) {
  long n;
  if (zlb_parse_long(value, &n) || n < lo || n > hi)
    return zlb_cli_bad_value(opt, value, want);
  *out = n;
  return 0;
}

int zlb_cli_double_in(const char *opt, const char *value, double lo, int lo_open, double hi,
                      const char *unit, const char *want, double *out) {
  double d;
  /* zlb_parse_double refuses nan, inf, blanks and trailing text. */
  if (zlb_parse_double(value, &d) || d < lo || (lo_open && d == lo))
    return zlb_cli_bad_value(opt, value, want);
  if (d > hi) {
    zlb_cli_errorf("invalid value '%s' for %s: above the maximum %.15g%s%s", value, opt, hi,
                   unit && *unit ? " " : "", unit ? unit : "");
    return -1;
  }
  *out = d;
  return 0;
}

int zlb_cli_split(const char *opt, const char *value, zlb_strvec_t *out) {
  for (const char *p = value;;) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    while (n && (*p == ' ' || *p == '\t')) {
      p++;
      n--;
    }
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
      n--;
    if (!n) {
      zlb_cli_errorf("%s: empty item in '%s' (a doubled or trailing comma?)", opt, value);
      return -1;
    }
    if (!e)
      break;
    p = e + 1;
  }
  zlb_strvec_split(out, value, ',');
  return 0;
}

/* Check mode (zlb_cli_check_begin): argv is read as usual, every value
 * checked, but nothing may happen afterwards, so zlb_cli_parse answers
 * ZLB_CLI_BAD in any case and keeps its real verdict here. */
static struct {
  int on, ok;
} check;

void zlb_cli_check_begin(void) {
  check.on = 1;
  check.ok = 0;
}

int zlb_cli_check_end(void) {
  int ok = check.on && check.ok;
  check.on = check.ok = 0;
  return ok ? 0 : -1;
}

/* A value naming a file or folder: in check mode it belongs to another
 * machine (the cluster's), so it is not looked at. */
static int is_path_arg(const char *arg) {
  return arg && (!strcmp(arg, "FILE") || !strcmp(arg, "DIR") || !strcmp(arg, "PATH"));
}

/* The entry named `name` (its first `len` characters), looking into
 * included tables too; NULL when there is none. */
static const zlb_cli_option_t *find(const zlb_cli_option_t *opts, const char *name, size_t len) {
  for (const zlb_cli_option_t *o = opts; o->kind != ZLB_CLI_KIND_END; o++) {
    if (o->kind == ZLB_CLI_KIND_INCLUDE) {
      const zlb_cli_option_t *f = find(o->ptr, name, len);
      if (f)
        return f;
      continue;
    }
    if (o->kind == ZLB_CLI_KIND_SECTION)
      continue;
    if ((o->name && strlen(o->name) == len && !strncmp(o->name, name, len)) ||
        (o->alias && strlen(o->alias) == len && !strncmp(o->alias, name, len)))
      return o;
  }
  return NULL;
}

static int store(const zlb_cli_option_t *o, const char *name, const char *value) {
  switch (o->kind) {
  case ZLB_CLI_KIND_FLAG:
    if (o->ptr)
      *(int *)o->ptr = 1;
    return 0;
  case ZLB_CLI_KIND_STRING:
    *(const char **)o->ptr = value;
    return 0;
  case ZLB_CLI_KIND_LIST:
    zlb_strvec_push(o->ptr, value);
    return 0;
  case ZLB_CLI_KIND_SPLIT:
    return zlb_cli_split(name, value, o->ptr);
  case ZLB_CLI_KIND_CALLBACK:
    if (check.on && is_path_arg(o->arg))
      return 0;
    return o->fn(o, name, value, o->ptr);
  default:
    return -1;
  }
}

int zlb_cli_parse(const char *cmd, const zlb_cli_option_t *opts, int argc, char **argv,
                  zlb_strvec_t *args, zlb_strvec_t *pass) {
  int only_args = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *eq, *value = NULL;
    const zlb_cli_option_t *o;
    size_t len;
    int first = i;

    if (only_args || a[0] != '-' || !a[1]) {
      if (check.on) {
        zlb_cli_errorf("unexpected argument '%s' for 'zlbench %s' (only options go here)", a,
                       cmd);
        return ZLB_CLI_BAD;
      }
      zlb_strvec_push(args, a);
      continue;
    }
    if (!strcmp(a, "--")) {
      only_args = 1;
      continue;
    }
    if (zlb_cli_is_help(a)) {
      if (!check.on)
        return ZLB_CLI_HELP;
      zlb_cli_errorf("'%s' is not an option to pass on to 'zlbench %s'", a, cmd);
      return ZLB_CLI_BAD;
    }
    eq = strchr(a, '=');
    len = eq ? (size_t)(eq - a) : strlen(a);
    o = a[1] == '-' ? find(opts, a, len) : NULL;
    if (!o) {
      zlb_cli_errorf("unknown option '%.*s' for 'zlbench %s' (see zlbench %s --help)",
                     (int)len, a, cmd, cmd);
      return ZLB_CLI_BAD;
    }
    if (!o->arg) {
      if (eq) {
        zlb_cli_errorf("option '%.*s' takes no value (given '%s')", (int)len, a, eq + 1);
        return ZLB_CLI_BAD;
      }
    } else if (eq) {
      value = eq + 1;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      zlb_cli_errorf("option '%s' needs a value (%s %s)", a, a, o->arg);
      return ZLB_CLI_BAD;
    }
    {
      char name[64];
      snprintf(name, sizeof(name), "%.*s", (int)len, a);
      /* "--ops ''" would otherwise read as no --ops at all: the whole
       * inventory instead of nothing. */
      if (value && !*value && !(o->flags & ZLB_CLI_EMPTY_OK)) {
        zlb_cli_errorf("%s: empty value (give one, or leave the option out)", name);
        return ZLB_CLI_BAD;
      }
      if (store(o, name, value))
        return ZLB_CLI_BAD;
    }
    if (pass && (o->flags & ZLB_CLI_PASS))
      for (int k = first; k <= i; k++)
        zlb_strvec_push(pass, argv[k]);
  }
  if (check.on) {
    check.ok = 1;
    return ZLB_CLI_BAD; /* checked: the command must stop here */
  }
  return ZLB_CLI_PARSED;
}

void zlb_cli_help(FILE *f, const zlb_cli_option_t *opts) {
  for (const zlb_cli_option_t *o = opts; o->kind != ZLB_CLI_KIND_END; o++) {
    char head[64];
    const char *h = o->help ? o->help : "", *nl;
    int n;
    if (o->kind == ZLB_CLI_KIND_INCLUDE) {
      zlb_cli_help(f, o->ptr);
      continue;
    }
    if (o->kind == ZLB_CLI_KIND_SECTION) {
      fprintf(f, "%s\n", h);
      continue;
    }
    n = snprintf(head, sizeof(head), "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    if (n < 0)
      continue;
    /* A head too long for its column gets its text on the next line. */
    if (n > HELP_COL - 4)
      fprintf(f, "  %s\n%*s", head, HELP_COL, "");
    else
      fprintf(f, "  %-*s", HELP_COL - 2, head);
    while ((nl = strchr(h, '\n'))) {
      fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COL, "");
      h = nl + 1;
    }
    fprintf(f, "%s\n", h);
  }
}
