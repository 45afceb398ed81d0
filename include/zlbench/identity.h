/* run_identity.json: the one writer of the members that `zlbench run` and
 * `zlbench batch` share, so each has the same type in both (docs/formats.md). */
#ifndef ZLBENCH_IDENTITY_H
#define ZLBENCH_IDENTITY_H

#include "zlbench/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The schema both kinds of run_identity.json carry. */
#define ZLB_IDENTITY_SCHEMA "zlbench.run_identity/1"

/**
 * Open the top-level object and write the common head: `schema`, `kind`
 * ("run" or "batch"), `tool` (object: name, version, git_commit), `argv`
 * (array of strings) and `host` (object: hostname, kernel, machine, pid).
 * The caller adds its own members and closes the object.
 */
void zlb_identity_head(zlb_jw_t *jw, const char *kind, int argc, char **argv);

/**
 * Open the `backend` object with its common members: `name` (string) and
 * `visibility_env` (string, or null when the backend declares none). The
 * caller may add members of its kind, then closes it with
 * zlb_jw_object_end().
 */
void zlb_identity_backend_begin(zlb_jw_t *jw, const char *name, const char *visibility_env);

/**
 * Write `started` (string, ISO 8601) and `finished`: the current time when
 * `final`, else null (the first write, so a crash leaves it null).
 */
void zlb_identity_times(zlb_jw_t *jw, const char *started, int final);

#ifdef __cplusplus
}
#endif
#endif
