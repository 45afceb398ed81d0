#!/bin/sh
# Check the build dependencies and install the missing Debian packages
# (apt-get), or stop with the exact command to run.
#   scripts/deps.sh build   compiler, make, cmake, libyaml, cJSON, SQLite
#                           (zlbench history)
#   scripts/deps.sh test    the same plus cmocka, and these, which when missing
#                           only make their tests skip, saying so: pytest for
#                           Debian's python3 (the Python package's tests),
#                           chromium (the HTML report's browser test), Slurm
#                           (slurm-wlm, munge: the Slurm test starts a
#                           one-node cluster) and HIP's header
#                           (libamdhip64-dev: the ROCm declarations check),
#                           clang with libFuzzer's runtime (clang,
#                           libclang-rt-dev: the fuzz targets, tests/fuzz)
set -u
need=""
want=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_cmd cc || have_cmd gcc || need="$need gcc"
have_cmd make || need="$need make"
have_cmd cmake || need="$need cmake"
# A header where the compiler looks by default (the .a comes with it).
have_header() {
  [ -f "/usr/include/$1" ] || [ -f "/usr/local/include/$1" ]
}
have_header yaml.h || need="$need libyaml-dev"
have_header cjson/cJSON.h || need="$need libcjson-dev"
have_header sqlite3.h || need="$need libsqlite3-dev"
if [ "${1:-build}" = test ]; then
  have_header cmocka.h || need="$need libcmocka-dev"
  /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || want="$want python3-pytest"
  { have_cmd slurmctld || [ -x /usr/sbin/slurmctld ]; } || want="$want slurm-wlm"
  { have_cmd munged || [ -x /usr/sbin/munged ]; } || want="$want munge"
  # HIP's header and runtime: the test that checks the ROCm backend's
  # declarations against the header, and the "no device" case on the real
  # library.
  have_header hip/hip_runtime_api.h || want="$want libamdhip64-dev"
  have_cmd chromium || have_cmd chromium-browser || have_cmd google-chrome || want="$want chromium"
  # clang and libFuzzer's runtime (tests/fuzz): linking a target is the test.
  have_cmd clang || want="$want clang"
  if fz=$(mktemp -d 2>/dev/null); then
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n > 9; }' >"$fz/p.c"
    clang -fsanitize=fuzzer "$fz/p.c" -o "$fz/p" >/dev/null 2>&1 || want="$want libclang-rt-dev"
    rm -rf "$fz"
  fi
fi
# Noninteractive: slurm-wlm and munge ask nothing, and start no service
# where there is no init system (the Slurm test starts its own daemons).
install_cmd() { echo "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends$1"; }
can_root() { [ "$(id -u)" = 0 ] && have_cmd apt-get; }
can_sudo() { have_cmd sudo && have_cmd apt-get && sudo -n true 2>/dev/null; }

# Wanted, not needed: installed when we can install, else (or when the
# installation fails) a warning: their tests skip, saying so.
# One package at a time: one that this distribution lacks must not keep
# the others out.
if [ -n "$want" ]; then
  if can_root; then pre=""; elif can_sudo; then pre="sudo"; else pre="none"; fi
  if [ "$pre" = none ]; then
    echo "zlbench: the Python, Slurm, HIP header or fuzz tests will skip without:$want (install with: sudo sh -c '$(install_cmd "$want")')" >&2
  else
    echo "zlbench: installing wanted packages:$want"
    $pre apt-get update >/dev/null 2>&1 || true
    for p in $want; do
      $pre env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$p" \
        >/dev/null 2>&1 || echo "zlbench: could not install $p; its tests will skip" >&2
    done
  fi
fi
[ -z "$need" ] && exit 0

cmd=$(install_cmd "$need")
if can_root; then
  echo "zlbench: installing missing packages:$need"
  sh -c "$cmd" || { echo "zlbench: installation failed; run: $cmd" >&2; exit 1; }
elif can_sudo; then
  echo "zlbench: installing missing packages with sudo:$need"
  sudo sh -c "$cmd" || { echo "zlbench: installation failed; run: sudo sh -c '$cmd'" >&2; exit 1; }
else
  echo "zlbench: missing packages:$need" >&2
  echo "zlbench: install them with: sudo sh -c '$cmd'" >&2
  exit 1
fi
