#!/bin/sh
# Adoption test: install into a staging prefix (`make install`), then build the
# examples OUTSIDE the tree with nothing but `pkg-config --cflags --libs
# lockstep` (C with cc, C++ with c++), link them against the installed shared
# library, and run them: the physics program, the replay verifier on a good
# and a tampered recording, and two lockstep clients against the installed
# `lockstep relay` (which must find its scenes under PREFIX/share/lockstep).
# usage: examples.sh BUILD_DIR   (run from the repository root)
set -eu
build=$(cd "$1" && pwd)
root=$(pwd)
stage=$build/stage
out=$build/examples
rm -rf "$stage" "$out" "$build/stage-lib"
mkdir -p "$out"
make --no-print-directory -s install PREFIX="$stage" BUILD="$1" >/dev/null
export PKG_CONFIG_PATH="$stage/lib/pkgconfig"
export LD_LIBRARY_PATH="$stage/lib"
cflags=$(pkg-config --cflags lockstep)
libs=$(pkg-config --libs lockstep)
echo "examples: pkg-config lockstep $(pkg-config --modversion lockstep): $cflags $libs"
cd "$out" # nothing of the source tree is on the include path from here
cc -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags "$root/examples/physics.c" $libs -o physics
cc -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags "$root/examples/lockstep_client.c" $libs -o lockstep_client
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror $cflags "$root/examples/replay_verify.cpp" $libs -o replay_verify
# Static link from the same .pc.
cc -std=c11 $cflags "$root/examples/physics.c" $(pkg-config --static --libs lockstep | sed 's/-llockstep/-l:liblockstep.a/') -o physics_static
fail() { echo "examples: FAIL: $*"; exit 1; }

# The SONAME carries the 0.x ABI (SPEC.md §19.5): liblockstep.so.0.MINOR, so a
# program linked against 0.3 never loads 0.4. The installed links:
# liblockstep.so -> liblockstep.so.0.MINOR -> liblockstep.so.0.MINOR.PATCH.
version=$(pkg-config --modversion lockstep)
case $version in
0.*) soname=liblockstep.so.$(echo "$version" | cut -d. -f1,2) ;;
*) soname=liblockstep.so.$(echo "$version" | cut -d. -f1) ;;
esac
check_soname() { # check_soname LIBDIR
  got=$(readelf -d "$1/liblockstep.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$got" = "$soname" ] || fail "$1/liblockstep.so.$version: SONAME '$got', expected $soname"
  [ "$(readlink "$1/$soname")" = "liblockstep.so.$version" ] &&
    [ "$(readlink "$1/liblockstep.so")" = "$soname" ] ||
    fail "$1: links $(ls -l "$1"/liblockstep.so*)"
}
check_soname "$stage/lib"
ldd ./physics | grep -q "$soname => $stage/lib" || fail "physics does not use the installed $soname: $(ldd ./physics)"
readelf -d ./physics | grep -q "(NEEDED).*\[$soname\]" || fail "physics does not need $soname"
echo "examples: SONAME $soname (readelf -d), links liblockstep.so -> $soname -> liblockstep.so.$version"
./physics >physics.out || fail "physics exited $?"
grep -q '^tick 180 checksum ' physics.out || fail "physics printed: $(cat physics.out)"
./physics_static | cmp -s - physics.out || fail "static and shared physics differ"
echo "examples: physics (shared and static): $(tail -1 physics.out)"

# CMake: find_package(lockstep 0.MINOR) from the staged prefix, the shared and the
# static imported targets; and a newer minor is refused while the major is 0.
if command -v cmake >/dev/null; then
  minor=$(pkg-config --modversion lockstep | cut -d. -f1,2)
  mkdir -p cmake_src cmake_build
  cat >cmake_src/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.13)
project(lockstep_cmake_example C)
find_package(lockstep $minor REQUIRED)
add_executable(physics_cmake "$root/examples/physics.c")
target_link_libraries(physics_cmake PRIVATE lockstep::lockstep)
add_executable(physics_cmake_static "$root/examples/physics.c")
target_link_libraries(physics_cmake_static PRIVATE lockstep::static)
find_package(lockstep 0.999 QUIET)
if(lockstep_FOUND)
  message(FATAL_ERROR "a newer 0.x minor must not be found")
endif()
CMAKE
  cmake -S cmake_src -B cmake_build -DCMAKE_PREFIX_PATH="$stage" >cmake.out 2>&1 ||
    fail "cmake configure: $(cat cmake.out)"
  cmake --build cmake_build >>cmake.out 2>&1 || fail "cmake build: $(cat cmake.out)"
  ./cmake_build/physics_cmake | cmp -s - physics.out || fail "CMake-built physics differs"
  ./cmake_build/physics_cmake_static | cmp -s - physics.out || fail "CMake static physics differs"
  echo "examples: find_package(lockstep $minor): lockstep::lockstep and lockstep::static build physics"
else
  fail "cmake is not installed (make deps installs it)"
fi

./replay_verify "$root/tools/crosscheck/arena.lsr" >verify.out || fail "replay_verify exited $?: $(cat verify.out)"
grep -q '^verified 1200 ticks' verify.out || fail "replay_verify printed: $(cat verify.out)"
"$stage/bin/lockstep" replay tamper "$root/tools/crosscheck/arena.lsr" tampered.lsr --tick 700 --player 1 >/dev/null
set +e
./replay_verify tampered.lsr >tampered.out
code=$?
set -e
[ $code = 3 ] && grep -q '^DESYNC at tick 700' tampered.out || fail "tampered: exit $code, $(cat tampered.out)"
echo "examples: replay_verify (C++): $(cat verify.out); tampered copy: $(cat tampered.out)"

# Two clients against the installed relay; the scene comes from the install,
# where the installed library's ls_data_dir() says (as the CLI finds it).
scene="$stage/share/lockstep/scenes/arena.scene"
[ -f "$scene" ] || fail "scenes not installed under share/lockstep"
cat >data_dir.c <<'C'
#include <ls/scene.h>
#include <stdio.h>
int main(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/scenes/arena.scene", ls_data_dir());
    ls_scene s;
    ls_error err;
    if (ls_scene_load(path, &s, &err) != LS_OK) {
        printf("%s: %s\n", path, err.message);
        return 1;
    }
    printf("%s %u bodies\n", ls_data_dir(), (unsigned)s.body_count);
    ls_scene_free(&s);
    return 0;
}
C
cc -std=c11 -Wall -Wextra -Werror $cflags data_dir.c $libs -o data_dir
(unset LOCKSTEP_DATA; ./data_dir) >data_dir.out || fail "data_dir: $(cat data_dir.out)"
[ "$(cat data_dir.out)" = "$stage/share/lockstep 17 bodies" ] || fail "ls_data_dir: $(cat data_dir.out)"
echo "examples: ls_data_dir() = $stage/share/lockstep: arena.scene loads from it"
# The relay records the match and signs the recording with a key made here.
# (The lines between the two relay marks are shown in the guide docs/guide/relay.md.)
# [relay]
"$stage/bin/lockstep" keygen --out relay >/dev/null
"$stage/bin/lockstep" relay --slots 2 --ticks 240 --exit-when-done --join-timeout 20000 \
  --record match.lsr --sign-key relay.key --credentials . >relay.out 2>&1 &
# [relay]
relay=$!
i=0
while ! grep -q '^ready' relay.out; do
  i=$((i + 1)); [ $i -lt 100 ] || { kill $relay; fail "relay did not start: $(cat relay.out)"; }
  sleep 0.1
done
port=$(sed -n 's/^listening 127.0.0.1:\([0-9]*\)$/\1/p' relay.out)
c0file=$(sed -n 's/^credential 1 0 //p' relay.out)
c1file=$(sed -n 's/^credential 1 1 //p' relay.out)
./lockstep_client 127.0.0.1 "$port" "$c0file" "$scene" >client0.out &
c0=$!
# Client 1 plays in rollback mode in the same match: same final checksum.
./lockstep_client 127.0.0.1 "$port" "$c1file" "$scene" rollback >client1.out || true
wait $c0 || true
wait $relay || true
s0=$(sed -n 's/.*finished after 240 ticks, checksum //p' client0.out)
s1=$(sed -n 's/.*finished after 240 ticks, checksum //p' client1.out)
[ -n "$s0" ] && [ "$s0" = "$s1" ] || fail "clients: $(cat client0.out client1.out)"
grep -q '^rollback: .* in 240 frames' client1.out || fail "client 1 not in rollback mode: $(cat client1.out)"
echo "examples: lockstep_client x2 (lockstep and rollback) through the installed relay: 240 ticks, both checksums $s0"
# The installed CLI finds its installed scenes from anywhere.
"$stage/bin/lockstep" sim pyramid.scene --ticks 2 >sim.out || fail "installed sim: $(cat sim.out)"
# Every file a shipped scene references is installed beside it (mesh_terrain: terrain.obj).
"$stage/bin/lockstep" sim mesh_terrain.scene --ticks 2 >sim.out 2>&1 ||
  fail "installed mesh_terrain (its .obj): $(cat sim.out)"
# [verify]
"$stage/bin/lockstep" replay verify match.lsr --pubkey relay.pub >match.out ||
  fail "the relay's signed recording: $(cat match.out)"
# [verify]
echo "examples: the relay's recording, signed and re-simulated: $(tr '\n' ' ' <match.out)"
# A library-only install needs none of the CLI's dependencies and installs no CLI.
make -C "$root" --no-print-directory -s install-lib PREFIX="$build/stage-lib" BUILD="$1" >/dev/null
[ -f "$build/stage-lib/lib/pkgconfig/lockstep.pc" ] && [ ! -e "$build/stage-lib/bin" ] ||
  fail "install-lib installed $(ls "$build/stage-lib")"
check_soname "$build/stage-lib/lib"
echo "examples: make install-lib: headers, liblockstep.a/$soname, lockstep.pc, no CLI"
echo "examples: 8 passed, 0 failed"
