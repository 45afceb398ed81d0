#!/bin/sh
# Check the build dependencies and install the missing Debian packages
# (apt-get), or stop with the exact command to run.
#   scripts/deps.sh build   compiler, make, cmake, libyaml, cJSON, SQLite
#                           (zlbench history)
#   scripts/deps.sh test    the same plus cmocka, pytest for Debian's
#                           python3 (the Python package's tests) and
#                           chromium (the HTML report's browser test);
#                           without the last two those tests skip, saying so
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
  have_cmd chromium || have_cmd chromium-browser || have_cmd google-chrome || want="$want chromium"
fi
# Wanted, not needed: installed when we can install, else a warning.
if [ -n "$want" ]; then
  if [ "$(id -u)" = 0 ] && have_cmd apt-get || { have_cmd sudo && have_cmd apt-get && sudo -n true 2>/dev/null; }; then
    need="$need$want"
  else
    echo "zlbench: the Python and browser tests will skip without:$want (install with: sudo apt-get install -y$want)" >&2
  fi
fi
[ -z "$need" ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends$need"
if [ "$(id -u)" = 0 ] && have_cmd apt-get; then
  echo "zlbench: installing missing packages:$need"
  sh -c "$cmd" || { echo "zlbench: installation failed; run: $cmd" >&2; exit 1; }
elif have_cmd sudo && have_cmd apt-get && sudo -n true 2>/dev/null; then
  echo "zlbench: installing missing packages with sudo:$need"
  sudo sh -c "$cmd" || { echo "zlbench: installation failed; run: sudo sh -c '$cmd'" >&2; exit 1; }
else
  echo "zlbench: missing packages:$need" >&2
  echo "zlbench: install them with: sudo sh -c '$cmd'" >&2
  exit 1
fi
