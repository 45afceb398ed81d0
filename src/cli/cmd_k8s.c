/* `zlbench k8s`: print the Kubernetes Indexed Job of a sharded batch,
 * examples/k8s/indexed-job.yaml with its @NAME@ fields filled in. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sched_util.h"
#include "zlbench/ops.h"

/* Each vendor's device plugin resource. */
static const struct {
  const char *vendor, *resource;
} vendors[] = {
    {"nvidia", "nvidia.com/gpu"},       {"amd", "amd.com/gpu"},
    {"intel", "gpu.intel.com/i915"},    {"ascend", "huawei.com/Ascend910"},
    {"musa", "mthreads.com/vgpu"},      {"none", NULL},
};

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fputs("usage: zlbench k8s --shards N --image IMAGE --claim PVC [options] -- [batch options]\n"
        "\n"
        "Print a Kubernetes Indexed Job for a batch split into N host shards\n"
        "(examples/k8s/indexed-job.yaml filled in): completions N, pod I runs\n"
        "'zlbench batch' as shard I (JOB_COMPLETION_INDEX with ZL_SHARD_COUNT) into\n"
        "MOUNT/shard-I on the shared volume PVC, asking for G GPUs of the vendor's device\n"
        "plugin, then merges every shard there into MOUNT/merged. Apply it with\n"
        "'zlbench k8s ... | kubectl apply -f -'.\n"
        "\n"
        "options:\n",
        f);
  zlb_cli_help(f, opts);
  fputs("\nvendors and their resources: nvidia (nvidia.com/gpu), amd (amd.com/gpu), intel\n"
        "(gpu.intel.com/i915), ascend (huawei.com/Ascend910), musa (mthreads.com/vgpu),\n"
        "none (no GPU: the host corpus).\n"
        "\nexit codes: 0 printed, 2 bad arguments or template.\n",
        f);
}

static int opt_count(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  (void)opt;
  return zlb_cli_long_in(name, v, 0, 100000, "an integer 0..100000", ptr);
}

static int opt_positive(const zlb_cli_option_t *opt, const char *name, const char *v,
                        void *ptr) {
  (void)opt;
  return zlb_cli_long_in(name, v, 1, 100000, "an integer 1..100000", ptr);
}

/* Where the results volume may be mounted: an absolute path of plain
 * components that hides nothing the container runs: not / or a system
 * folder itself (/usr, /usr/local/bin, /etc, ...; a folder below one, such
 * as /var/lib/zlbench, is fine), and not a folder holding --zlbench. */
static int mount_ok(const char *m, const char *zlbench) {
  static const char *const sys[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                    "/usr", "/usr/bin", "/usr/sbin", "/usr/lib",
                                    "/usr/lib64", "/usr/local", "/usr/local/bin",
                                    "/usr/local/lib", "/etc", "/dev", "/proc", "/sys",
                                    "/run", "/var", "/boot", "/opt", "/tmp", "/home", "/root"};
  size_t n = strlen(m);
  if (m[0] != '/' || n < 2 || m[n - 1] == '/' || strstr(m, "//") || strstr(m, "/./") ||
      strstr(m, "/../") || !strcmp(m + n - 2, "/.") || (n >= 3 && !strcmp(m + n - 3, "/..")))
    return 0;
  for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
    if (!strcmp(m, sys[i]))
      return 0;
  /* zlbench inside the mount would be hidden by the volume. */
  if (zlbench && zlbench[0] == '/' && !strncmp(zlbench, m, n) && zlbench[n] == '/')
    return 0;
  return 1;
}

/* A Kubernetes name: lower-case letters, digits and '-', at most 52. */
static int k8s_name_ok(const char *s) {
  size_t n = strlen(s);
  if (!n || n > 52 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
      return 0;
  return 1;
}

/* A value that goes into the YAML and the shell unquoted: no blanks,
 * quotes, '#', '$', '\\', YAML flow characters or control characters. */
static int plain_ok(const char *s) {
  if (!*s)
    return 0;
  for (const char *c = s; *c; c++)
    if ((unsigned char)*c <= ' ' || (unsigned char)*c == 0x7f || strchr("'\"#$\\`{}[],&*!|>%", *c))
      return 0;
  return 1;
}

int zlb_cmd_k8s(int argc, char **argv) {
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  zlb_strbuf_t tpl_path = ZLB_STRBUF_INIT, out = ZLB_STRBUF_INIT, words = ZLB_STRBUF_INIT,
               limits = ZLB_STRBUF_INIT, zq = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  const char *name = "zlbench", *image = NULL, *claim = NULL, *mount = "/results",
             *vendor = "nvidia", *tpl = NULL, *zlbench = "zlbench", *resource = NULL;
  long shards = 0, gpus = 1, parallelism = 0;
  char *text = NULL;
  int code = ZLB_EXIT_USAGE, known = 0;
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_CALLBACK("--shards", "N", opt_count, &shards, "host shards: the Job's completions"),
        ZLB_CLI_STRING("--image", "IMAGE", &image, "container image holding zlbench"),
        ZLB_CLI_STRING("--claim", "PVC", &claim,
                       "PersistentVolumeClaim every pod mounts (ReadWriteMany)"),
        ZLB_CLI_STRING("--vendor", "V", &vendor, "GPU vendor of the device plugin (default nvidia)"),
        ZLB_CLI_CALLBACK("--gpus", "G", opt_count, &gpus, "GPUs per pod (default 1; 0: none)"),
        ZLB_CLI_CALLBACK("--parallelism", "P", opt_positive, &parallelism,
                         "pods at once, 1..100000 (default: all shards)"),
        ZLB_CLI_STRING("--name", "NAME", &name, "the Job's name (default zlbench)"),
        ZLB_CLI_STRING("--mount", "PATH", &mount,
                       "where the volume is mounted (default /results; not / or a\nsystem folder such as /usr)"),
        ZLB_CLI_STRING("--zlbench", "PATH", &zlbench,
                       "zlbench in the image (default: zlbench on the image's PATH)"),
        ZLB_CLI_STRING("--template", "FILE", &tpl,
                       "another template (default examples/k8s/indexed-job.yaml)"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("k8s", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      code = ZLB_EXIT_OK;
      goto out;
    case ZLB_CLI_BAD:
      goto out;
    default:
      break;
    }
  }
  if (shards < 1 || !image || !claim) {
    zlb_cli_errorf("k8s: --shards N (1 or more), --image and --claim are required "
                   "(see zlbench k8s --help)");
    goto out;
  }
  if (!k8s_name_ok(name) || !k8s_name_ok(claim)) {
    zlb_cli_errorf("k8s: --name and --claim must be lower-case letters, digits and '-' "
                   "(at most 52), given '%s' and '%s'",
                   name, claim);
    goto out;
  }
  if (!plain_ok(image) || !plain_ok(mount) || mount[0] != '/' || !plain_ok(zlbench)) {
    zlb_cli_errorf("k8s: --image, --mount (absolute) and --zlbench must be plain words");
    goto out;
  }
  if (!mount_ok(mount, zlbench)) {
    zlb_cli_errorf("k8s: --mount '%s': expected an absolute path of plain components, not / "
                   "or a system folder (/bin, /usr, /etc, ...) and not one holding --zlbench: "
                   "the volume would hide the image's own files",
                   mount);
    goto out;
  }
  for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
    if (!strcmp(vendor, vendors[i].vendor)) {
      known = 1;
      resource = vendors[i].resource;
    }
  if (!known) {
    zlb_cli_errorf("k8s: unknown --vendor '%s': nvidia, amd, intel, ascend, musa or none",
                   vendor);
    goto out;
  }
  if (zlb_sched_check_batch_args("k8s", &args))
    goto out;
  if (tpl) {
    zlb_strbuf_addstr(&tpl_path, tpl);
  } else {
    if (zlb_assets_dir(&tpl_path, &err)) {
      code = zlb_cli_fail(&err);
      goto out;
    }
    zlb_strbuf_addstr(&tpl_path, "/../examples/k8s/indexed-job.yaml");
  }
  if (zlb_read_file_max(tpl_path.buf, ZLB_READ_MAX_YAML, "a YAML file", &text, NULL, &err)) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  for (size_t i = 0; i < args.n; i++) {
    if (strchr(args.v[i], '\n')) {
      zlb_cli_errorf("k8s: a batch option holds a newline");
      goto out;
    }
    zlb_strbuf_addch(&words, ' ');
    zlb_sh_quote(&words, args.v[i]);
  }
  if (resource && gpus > 0)
    zlb_strbuf_addf(&limits, "            %s: %ld", resource, gpus);
  else
    zlb_strbuf_addstr(&limits, "            {}");
  zlb_strbuf_addstr(&zq, zlbench);
  {
    /* Fill in @FIELD@; an unknown field is an error naming its line. */
    const char *p = text;
    int line = 1;
    while (*p) {
      const char *e;
      char key[32];
      if (*p != '@') {
        line += *p == '\n';
        zlb_strbuf_addch(&out, *p++);
        continue;
      }
      e = strchr(p + 1, '@');
      if (!e || e - p - 1 <= 0 || e - p - 1 >= (long)sizeof(key)) {
        zlb_cli_errorf("k8s: %s:%d: a lone '@'", tpl_path.buf, line);
        goto out;
      }
      snprintf(key, sizeof(key), "%.*s", (int)(e - p - 1), p + 1);
      if (!strcmp(key, "NAME"))
        zlb_strbuf_addstr(&out, name);
      else if (!strcmp(key, "SHARDS"))
        zlb_strbuf_addf(&out, "%ld", shards);
      else if (!strcmp(key, "PARALLELISM"))
        zlb_strbuf_addf(&out, "%ld", parallelism ? parallelism : shards);
      else if (!strcmp(key, "IMAGE"))
        zlb_strbuf_addstr(&out, image);
      else if (!strcmp(key, "CLAIM"))
        zlb_strbuf_addstr(&out, claim);
      else if (!strcmp(key, "MOUNT"))
        zlb_strbuf_addstr(&out, mount);
      else if (!strcmp(key, "ZLBENCH"))
        zlb_strbuf_addstr(&out, zq.buf);
      else if (!strcmp(key, "LIMITS"))
        zlb_strbuf_addstr(&out, limits.buf);
      else if (!strcmp(key, "BATCH_ARGS"))
        zlb_strbuf_addstr(&out, words.len ? words.buf + 1 : "");
      else {
        zlb_cli_errorf("k8s: %s:%d: unknown field @%s@", tpl_path.buf, line, key);
        goto out;
      }
      p = e + 1;
    }
  }
  fputs(out.buf, stdout);
  code = fflush(stdout) == 0 ? ZLB_EXIT_OK : ZLB_EXIT_OUTPUT;
out:
  free(text);
  zlb_strvec_release(&args);
  zlb_strbuf_release(&tpl_path);
  zlb_strbuf_release(&out);
  zlb_strbuf_release(&words);
  zlb_strbuf_release(&limits);
  zlb_strbuf_release(&zq);
  return code;
}
