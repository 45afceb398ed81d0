/* zlbench: command-line entry point and subcommand dispatch. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "history.h"

static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *what;
} commands[] = {
    {"run", zlb_cmd_run, "benchmark one operator (baseline vs candidate)"},
    {"batch", zlb_cmd_batch, "screen many operators on every device, in child processes"},
    {"merge", zlb_cmd_merge, "combine the output folders of a batch's host shards into one"},
    {"slurm", zlb_cmd_slurm, "write (and submit) Slurm jobs for a sharded batch and its merge"},
    {"k8s", zlb_cmd_k8s, "print a Kubernetes Indexed Job for a sharded batch and its merge"},
    {"summary", zlb_cmd_summary, "aggregate run.log tables (ours and FlagGems') into summary.csv"},
    {"ab", zlb_cmd_ab, "paired A/B of two operator libraries in one process; --self: false-verdict rate"},
    {"compare", zlb_cmd_compare, "is B faster or slower than A, beyond noise (results folders)"},
    {"report", zlb_cmd_report, "write a self-contained HTML report of a results folder"},
    {"history", zlb_cmd_history, "keep results in SQLite; show trends; check a run against them"},
    {"list", zlb_cmd_list, "list operators and families"},
    {"devices", zlb_cmd_devices, "list backends, devices and capability flags"},
    {"plan", zlb_cmd_plan, "show the timer and stages a backend's capabilities produce"},
    {"inventory", zlb_cmd_inventory, "show or check the curated operator inventory"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: zlbench <command> [options]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].what);
  fprintf(f, "\n'zlbench <command> --help' describes a command's options.\n"
             "'zlbench --version' prints the version.\n");
}

int main(int argc, char **argv) {
  /* A reader of stdout that goes away (| head, a closed pager) must not
   * kill a batch or a run half-way: writes then fail with EPIPE, and the
   * work (results files, run_identity.json) goes on. Children get the
   * default disposition back before exec (src/batch/spawn.c). */
  signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    usage(stderr);
    return ZLB_EXIT_USAGE;
  }
  if (zlb_cli_is_help(argv[1]) || !strcmp(argv[1], "help")) {
    /* `zlbench help CMD` is `zlbench CMD --help`. */
    if (!strcmp(argv[1], "help") && argc > 2) {
      static char help_flag[] = "--help";
      char *hargv[3] = {argv[2], help_flag, NULL};
      for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[2], commands[i].name))
          return commands[i].fn(2, hargv);
      zlb_cli_errorf("unknown command '%s'", argv[2]);
      usage(stderr);
      return ZLB_EXIT_USAGE;
    }
    usage(stdout);
    return ZLB_EXIT_OK;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
    printf("zlbench %s (%s)\n", ZLB_VERSION, ZLB_GIT_COMMIT);
    return ZLB_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (!strcmp(argv[1], commands[i].name))
      return commands[i].fn(argc - 1, argv + 1);
  zlb_cli_errorf("unknown command '%s'", argv[1]);
  usage(stderr);
  return ZLB_EXIT_USAGE;
}
