#!/bin/sh
# The shared library exports exactly the functions that the public headers
# declare with LS_API: nothing internal leaks (private cross-file functions end in `_`),
# and every declared function is really there.
# usage: check_exports.sh LIB.so HEADER...
set -eu
lib=$1
shift
tmp=${TMPDIR:-/tmp}/ls_exports.$$
trap 'rm -f "$tmp".*' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbRr]$/ {print $3}' | sed 's/@.*//' | sort -u >"$tmp.exported"
# A declaration starts with LS_API and names the function before its '('.
grep -hv '^ *#' "$@" | sed 's|//.*||' | tr '\n' ' ' | sed 's/;/;\n/g' | grep 'LS_API' |
  sed -n 's/.*LS_API[^(]*[^A-Za-z0-9_]\([A-Za-z_][A-Za-z0-9_]*\) *(.*/\1/p' | sort -u >"$tmp.declared"
status=0
extra=$(comm -23 "$tmp.exported" "$tmp.declared")
missing=$(comm -13 "$tmp.exported" "$tmp.declared")
if [ -n "$extra" ]; then
  echo "check_exports: exported but not declared in a public header:" $extra
  status=1
fi
if [ -n "$missing" ]; then
  echo "check_exports: declared LS_API but not exported:" $missing
  status=1
fi
n=$(wc -l <"$tmp.exported")
[ $status = 0 ] && echo "check_exports: $n exported symbols, all declared in the public headers, none missing"
exit $status
