#!/bin/sh
# The Debian packages as a user gets them (`make deb`): unpack liblockstep0.MINOR,
# liblockstep-dev and lockstep into a scratch root (dpkg -x: no root
# privileges, the system untouched), then build examples/physics.c against
# that root alone, with pkg-config and with CMake's find_package, shared and
# static, and run it: its output must be the tree's (the packages are built
# with Debian's hardening flags; the integer simulation must not notice). The
# packaged CLI finds its packaged scenes, verifies a recording of this
# engine and refuses an older one by the release that verifies it.
# usage: deb.sh BUILD_DIR RUNTIME.deb DEV.deb CLI.deb   (from the repository root)
set -eu
build=$(cd "$1" && pwd)
root=$(pwd)
lib_deb=$2 dev_deb=$3 cli_deb=$4
out=$build/deb-test
sysroot=$out/root
rm -rf "$out"
mkdir -p "$sysroot"
fail() { echo "deb: FAIL: $*"; exit 1; }

version=$(dpkg-deb -f "$dev_deb" Version)
case $version in
0.*) abi=$(echo "$version" | cut -d. -f1,2) ;;
*) abi=$(echo "$version" | cut -d. -f1) ;;
esac
soname=liblockstep.so.$abi
# Names and relations: the runtime package is named after the SONAME; -dev
# pins it to the same version and brings what lockstep.pc and the headers need.
[ "$(dpkg-deb -f "$lib_deb" Package)" = "liblockstep$abi" ] || fail "runtime package $(dpkg-deb -f "$lib_deb" Package)"
dev_depends=$(dpkg-deb -f "$dev_deb" Depends)
for d in "liblockstep$abi (= $version)" libfixmath-dev libsodium-dev libuv1-dev; do
  echo "$dev_depends" | grep -qF "$d" || fail "liblockstep-dev Depends: $dev_depends (no $d)"
done
cli_depends=$(dpkg-deb -f "$cli_deb" Depends)
for d in libsodium libuv1 libpng; do
  echo "$cli_depends" | grep -q "$d" || fail "lockstep Depends: $cli_depends (no $d)"
done
echo "deb: packages $(for d in "$lib_deb" "$dev_deb" "$cli_deb"; do printf '%s ' "$(basename "$d")"; done)"
echo "deb: liblockstep-dev Depends: $dev_depends"

for d in "$lib_deb" "$dev_deb" "$cli_deb"; do dpkg -x "$d" "$sysroot"; done
libdir=$sysroot/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
got=$(readelf -d "$libdir/liblockstep.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$got" = "$soname" ] || fail "SONAME '$got', expected $soname"
[ "$(readlink "$libdir/$soname")" = "liblockstep.so.$version" ] &&
  [ "$(readlink "$libdir/liblockstep.so")" = "$soname" ] || fail "links: $(ls -l "$libdir"/liblockstep.so*)"
lib_files=$(dpkg-deb -c "$lib_deb")
echo "$lib_files" | grep -q "liblockstep.so.$version$" && ! echo "$lib_files" | grep -q '\.so -> ' ||
  fail "liblockstep$abi holds $lib_files"
echo "deb: dpkg -x into $sysroot: SONAME $soname (readelf -d), liblockstep.so -> $soname (in -dev)"

# The tree's physics, the reference.
cd "$out"
cc -std=c11 -I"$root/core/include" -I"$root/fixmath_phys/include" "$root/examples/physics.c" "$build/liblockstep.a" -pthread -lm -o physics_tree
./physics_tree >physics.out || fail "tree physics exited $?"

# pkg-config: the .pc says prefix=/usr; the scratch root stands in for it.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pc="pkg-config --define-variable=prefix=$sysroot/usr"
cflags=$($pc --cflags lockstep)
libs=$($pc --libs lockstep)
[ "$($pc --modversion lockstep)" = "$version" ] || fail "pkg-config --modversion $($pc --modversion lockstep)"
cc -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags "$root/examples/physics.c" $libs -o physics_pc
cc -std=c11 $cflags "$root/examples/physics.c" $($pc --static --libs lockstep | sed 's/-llockstep/-l:liblockstep.a/') -o physics_pc_static
readelf -d physics_pc | grep -q "(NEEDED).*\[$soname\]" || fail "physics_pc does not need $soname"
LD_LIBRARY_PATH=$libdir ldd ./physics_pc | grep -q "$soname => $libdir/" || fail "physics_pc loads $(LD_LIBRARY_PATH=$libdir ldd ./physics_pc)"
LD_LIBRARY_PATH=$libdir ./physics_pc | cmp -s - physics.out || fail "packaged physics (pkg-config) differs from the tree's"
./physics_pc_static | cmp -s - physics.out || fail "packaged static physics (pkg-config) differs from the tree's"
echo "deb: pkg-config lockstep $version: $cflags $libs: physics (shared and static) as the tree's: $(tail -1 physics.out)"

# The packaged library's data directory is the packaged scenes' /usr/share/lockstep
# (LOCKSTEP_DATA moves it into the scratch root).
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
(unset LOCKSTEP_DATA; LD_LIBRARY_PATH=$libdir ./data_dir) >data_dir.out || true
case $(cat data_dir.out) in /usr/share/lockstep*) ;; *) fail "packaged ls_data_dir: $(cat data_dir.out)" ;; esac
LOCKSTEP_DATA=$sysroot/usr/share/lockstep LD_LIBRARY_PATH=$libdir ./data_dir >data_dir.out ||
  fail "data_dir: $(cat data_dir.out)"
echo "deb: ls_data_dir() = /usr/share/lockstep; arena.scene loads from the packaged scenes"

# CMake: find_package(lockstep 0.MINOR) from the scratch root.
mkdir -p cmake_src cmake_build
cat >cmake_src/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.13)
project(lockstep_deb_example C)
find_package(lockstep $(echo "$version" | cut -d. -f1,2) REQUIRED)
add_executable(physics_cmake "$root/examples/physics.c")
target_link_libraries(physics_cmake PRIVATE lockstep::lockstep)
add_executable(physics_cmake_static "$root/examples/physics.c")
target_link_libraries(physics_cmake_static PRIVATE lockstep::static)
CMAKE
cmake -S cmake_src -B cmake_build -DCMAKE_PREFIX_PATH="$sysroot/usr" >cmake.out 2>&1 || fail "cmake configure: $(cat cmake.out)"
grep -q "lockstep_DIR:PATH=$libdir/cmake/lockstep" cmake_build/CMakeCache.txt || fail "cmake found $(grep lockstep_DIR cmake_build/CMakeCache.txt)"
cmake --build cmake_build >>cmake.out 2>&1 || fail "cmake build: $(cat cmake.out)"
LD_LIBRARY_PATH=$libdir ./cmake_build/physics_cmake | cmp -s - physics.out || fail "packaged physics (CMake) differs"
./cmake_build/physics_cmake_static | cmp -s - physics.out || fail "packaged static physics (CMake) differs"
echo "deb: find_package(lockstep) in $libdir/cmake/lockstep: lockstep::lockstep and lockstep::static build physics, as the tree's"

# The packaged CLI: its version, its scenes (LOCKSTEP_DATA stands in for
# /usr/share/lockstep), its manual page, this engine's recording and an older one's.
cli=$sysroot/usr/bin/lockstep
[ "$("$cli" version)" = "$version" ] || fail "lockstep version: $("$cli" version)"
[ -f "$sysroot/usr/share/man/man1/lockstep.1.gz" ] || fail "no manual page"
LOCKSTEP_DATA=$sysroot/usr/share/lockstep "$cli" sim arena.scene --ticks 2 >sim.out 2>&1 || fail "packaged sim: $(cat sim.out)"
"$cli" replay verify "$root/tools/crosscheck/arena.lsr" --no-progress >verify.out 2>&1 || fail "verify: $(cat verify.out)"
grep -q '^verified 1200 ticks' verify.out || fail "verify printed $(cat verify.out)"
set +e
"$cli" replay verify "$root/tests/replays/solver_v2_arena.lsr" >old.out 2>&1
code=$?
set -e
[ $code = 1 ] && grep -q 'verify it with lockstep 0.2' old.out || fail "old recording: exit $code, $(cat old.out)"
echo "deb: lockstep $version CLI: scenes, man page, arena.lsr verified, a 0.2 recording refused: 'verify it with lockstep 0.2'"
echo "deb: 5 passed, 0 failed"
