/* The members of run_identity.json that runs and batches share, written in
 * one place so a field cannot have one type in a run and another in a batch. */
#include <sys/utsname.h>
#include <unistd.h>

#include "zlbench/identity.h"

void zlb_identity_head(zlb_jw_t *jw, const char *kind, int argc, char **argv) {
  struct utsname u;
  char host[256] = "";
  zlb_jw_object_begin(jw);
  zlb_jw_key_string(jw, "schema", ZLB_IDENTITY_SCHEMA);
  zlb_jw_key_string(jw, "kind", kind);
  zlb_jw_key_object(jw, "tool");
  zlb_jw_key_string(jw, "name", "zlbench");
  zlb_jw_key_string(jw, "version", ZLB_VERSION);
  zlb_jw_key_string(jw, "git_commit", ZLB_GIT_COMMIT);
  zlb_jw_object_end(jw);
  zlb_jw_key_array(jw, "argv");
  for (int i = 0; i < argc; i++)
    zlb_jw_string(jw, argv[i]);
  zlb_jw_array_end(jw);
  gethostname(host, sizeof(host) - 1);
  zlb_jw_key_object(jw, "host");
  zlb_jw_key_string(jw, "hostname", host);
  if (uname(&u) == 0) {
    zlb_jw_key_string(jw, "kernel", u.release);
    zlb_jw_key_string(jw, "machine", u.machine);
  } else {
    zlb_jw_key_null(jw, "kernel");
    zlb_jw_key_null(jw, "machine");
  }
  zlb_jw_key_int(jw, "pid", (long long)getpid());
  zlb_jw_object_end(jw);
}

void zlb_identity_backend_begin(zlb_jw_t *jw, const char *name, const char *visibility_env) {
  zlb_jw_key_object(jw, "backend");
  zlb_jw_key_string(jw, "name", name);
  zlb_jw_key_string(jw, "visibility_env", visibility_env);
}

void zlb_identity_times(zlb_jw_t *jw, const char *started, int final) {
  char now[32];
  zlb_jw_key_string(jw, "started", started);
  if (final) {
    zlb_iso8601_now(now, sizeof(now));
    zlb_jw_key_string(jw, "finished", now);
  } else {
    zlb_jw_key_null(jw, "finished");
  }
}
