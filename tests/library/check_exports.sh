#!/bin/sh
# The shared library exports exactly the functions that the public headers
# declare with LS_API: nothing internal leaks (private cross-file functions end in `_`),
# and every declared function is really there. One mark for private
# cross-file symbols: every other global symbol of the static archive ends in
# `_`, and no exported symbol does (SPEC §19.4, "Names").
# usage: check_exports.sh LIB.so LIB.a HEADER...
set -eu
lib=$1
archive=$2
shift 2
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
nm --defined-only "$archive" | awk '$2 ~ /^[TWDBR]$/ {print $3}' | sort -u >"$tmp.global"
unmarked=$(comm -23 "$tmp.global" "$tmp.exported" | grep -v '_$' || true)
if [ -n "$unmarked" ]; then
  echo "check_exports: global but not exported, and not marked private with a trailing _:" $unmarked
  status=1
fi
marked=$(grep '_$' "$tmp.exported" || true)
if [ -n "$marked" ]; then
  echo "check_exports: exported but named like a private symbol (trailing _):" $marked
  status=1
fi
if [ -n "$missing" ]; then
  echo "check_exports: declared LS_API but not exported:" $missing
  status=1
fi
n=$(wc -l <"$tmp.exported")
[ $status = 0 ] && echo "check_exports: $n exported symbols, all declared in the public headers, none missing; every other global symbol ends in _"
exit $status
