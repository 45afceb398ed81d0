#!/usr/bin/env bash
# libzlbench.so exports exactly the functions include/zlbench/api.h declares
# (ZLB_API), nothing of the engine behind them, and needs neither libyaml nor
# cJSON. Usage: check_exports.sh LIBZLBENCH_SO API_H
set -u
lib=$1 hdr=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$lib" ] || fail "no library at $lib"
command -v nm >/dev/null || fail "nm (binutils) is needed"
want=$(grep -oE '^ZLB_API [^(]*\(' "$hdr" | sed -E 's/.*[ *]([A-Za-z_0-9]+)\($/\1/' | sort -u)
[ -n "$want" ] || fail "no ZLB_API function found in $hdr"
# Defined dynamic symbols, less the version node (an absolute symbol).
got=$(nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$want") <(echo "$got"))
missing=$(comm -23 <(echo "$want") <(echo "$got"))
[ -z "$extra" ] || fail "exported but not in the API header: $(echo $extra)"
[ -z "$missing" ] || fail "declared in the API header but not exported: $(echo $missing)"
needed=$(readelf -d "$lib" | awk '/NEEDED/ { print $NF }')
case "$needed" in
*yaml* | *cjson*) fail "libzlbench.so needs libyaml or cJSON: $(echo $needed)" ;;
esac
echo "ok: $(echo "$got" | wc -l) symbols exported, all of them the API's; needs: $(echo $needed)"
