#!/bin/sh
# Real output for the guide pages (docs/guide/*.md \verbinclude them), made by
# `make docs` from this build, so no page shows an option or an output that
# the code does not have: the physics example's output, `lockstep relay
# --help`, `lockstep replay verify --help`, and a verify of a recording and of
# a tampered copy of it.
# usage: transcripts.sh TOOL LIB_A OUT_DIR CC "LIBS"   (from the repository root)
set -eu
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
lib=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
out=$3
cc=$4
libs=$5
root=$(pwd)
mkdir -p "$out"

# examples/physics.c against the library just built (examples.sh builds it from an install).
$cc -std=c11 -Icore/include -Ifixmath_phys/include "$root/examples/physics.c" "$lib" $libs -o "$out/physics"
"$out/physics" >"$out/physics_output.txt"

"$tool" relay --help >"$out/relay_help.txt"
"$tool" replay verify --help >"$out/replay_verify_help.txt"

# Run inside $out so the transcript shows short file names.
cd "$out"
cp "$root/tools/crosscheck/arena.lsr" arena.lsr
{
  echo '$ lockstep replay verify arena.lsr'
  "$tool" replay verify arena.lsr --no-progress
  echo '$ lockstep replay tamper arena.lsr bad.lsr --tick 700 --player 1'
  "$tool" replay tamper arena.lsr bad.lsr --tick 700 --player 1
  echo '$ lockstep replay verify bad.lsr; echo "exit $?"'
  status=0
  "$tool" replay verify bad.lsr --no-progress || status=$?
  echo "exit $status"
} >replay_verify.txt 2>&1
[ "$status" = 3 ] || { echo "transcripts: the tampered recording verified (exit $status)"; exit 1; }
rm -f arena.lsr bad.lsr physics
