# Lockstep engine: fixed-point deterministic physics, replay and relay.
# `make deps run` installs, builds and runs a scene with per-tick checksums; `make test` runs the tests.

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
WERROR  ?= 0
OPT     ?= -O2

# libfixmath is used with no FIXMATH_* defines: the Debian build's defaults are
# the semantics we reproduce bit for bit (SPEC.md "Numbers").
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wmissing-prototypes -Wstrict-prototypes
ifeq ($(WERROR),1)
WARN    += -Werror
endif
# -ffp-contract=off and no -ffast-math: the simulation has no floating point,
# but tools and tests do, and we never let fused or reassociated math in.
CFLAGS  ?= $(OPT) -g
# -fvisibility=hidden: the shared library exports only what the public headers
# mark LS_API (tests/check_exports.sh proves it).
# -pthread: the step's worker pool (fixmath_phys/src/dynamics/workers.c); every
# native compile and link that takes ALLFLAGS gets it.
ALLFLAGS = -std=c11 $(WARN) -ffp-contract=off -fPIC -fvisibility=hidden -MMD -MP -pthread $(CFLAGS) $(EXTRA_CFLAGS)
INCLUDES = -Icore/include -Ifixmath_phys/include
LDLIBS_TOOL = -lm
LDLIBS_TEST = -lcriterion -llibfixmath -lm
LIB_LIBS := -pthread
FUZZ_LIBS := -pthread

# Sources. Module fragments in mk/*.mk append to these lists (LIB_SRC,
# TOOL_SRC, INCLUDES, TEST_BINS, DEPS_PKGS, LDLIBS_TOOL, FUZZ_HARNESSES), so each
# module owns its build rules and the top level stays short.
# world/data_dir.c (ls_data_dir: the install's PREFIX/share/lockstep) is the
# native library's only: PHYS_SRC is also what the crosscheck and browser
# builds compile, and they have no install.
DATA_DIR_SRC := fixmath_phys/src/world/data_dir.c
PHYS_SRC  := $(filter-out $(DATA_DIR_SRC),$(wildcard core/src/*.c fixmath_phys/src/*.c fixmath_phys/src/*/*.c))
# Private headers of the physics library (folders by concept: math, collision, dynamics, world).
PHYS_H    := $(wildcard core/src/*.h fixmath_phys/src/*/*.h)
LIB_SRC   := $(PHYS_SRC) $(DATA_DIR_SRC)
TOOL_SRC  := $(wildcard tools/*.c)
TEST_SRC  := $(wildcard tests/*.c)

# Library version from ls/base.h. The SONAME carries the ABI (SPEC.md §19.5):
# liblockstep.so.0.MINOR while the major is 0 (every 0.x minor may break the
# ABI, so a program linked against 0.3 must not load 0.4), liblockstep.so.MAJOR
# from 1.0 on.
LS_VERSION_PART = $(shell sed -n 's/^\#define LS_VERSION_$(1) //p' core/include/ls/base.h)
LS_MAJOR   := $(call LS_VERSION_PART,MAJOR)
LS_MINOR   := $(call LS_VERSION_PART,MINOR)
LS_VERSION := $(LS_MAJOR).$(LS_MINOR).$(call LS_VERSION_PART,PATCH)
LS_ABI     := $(if $(filter 0,$(LS_MAJOR)),0.$(LS_MINOR),$(LS_MAJOR))
LIB_A    := $(BUILD)/liblockstep.a
LIB_SO   := $(BUILD)/liblockstep.so
LIB_SONAME := liblockstep.so.$(LS_ABI)
LIB_SO_REAL := $(BUILD)/liblockstep.so.$(LS_VERSION)
TOOL     := $(BUILD)/lockstep
TESTS    := $(BUILD)/test_all
TEST_BINS := $(TESTS)

DEPS_PKGS := libfixmath-dev libuv1-dev libcriterion-dev libxxhash-dev clang clang-format

include $(sort $(wildcard mk/*.mk))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_OBJ  := $(TOOL_SRC:%.c=$(BUILD)/obj/%.o)
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)

.DEFAULT_GOAL := all
.PHONY: all test run sim deps lint asan install clean format
all: $(LIB_A) $(LIB_SO) $(TOOL)

# The physics library is built at -O3, as Box3D's release build is (the
# bench compares the two). Why: its sweeps loop over a manifold's points and a
# group's lanes, branching inside on flags that do not change within the loop
# (the pass, the point order, restitution and impact lanes, the surface rows);
# -O3 unswitches and peels those loops, and the settled 1000-box pile steps
# 14 % faster (rain 4 %). The code is integer only, so the bits cannot depend
# on it: the crosscheck runs -O0, -O2 and -O3 builds against the same goldens.
# OPT=... on the command line still sets every object's level.
PHYS_OPT ?= -O3
$(PHYS_SRC:%.c=$(BUILD)/obj/%.o): OPT = $(PHYS_OPT)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLFLAGS) $(INCLUDES) $(CPPFLAGS) -c $< -o $@

# The library's ls_data_dir() (ls/scene.h) is $(PREFIX)/share/lockstep; the
# tool finds installed scenes there (tools/cli.h cli_find_scene). The stamp
# rebuilds it when PREFIX changes.
DATADIR := $(PREFIX)/share/lockstep
PREFIX_STAMP := $(BUILD)/prefix.stamp
$(PREFIX_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(DATADIR)' | cmp -s - $@ || echo '$(DATADIR)' > $@
.PHONY: FORCE
FORCE:
# Only data_dir.c uses it: an explicit prerequisite (a pattern rule cannot add one).
$(BUILD)/obj/$(DATA_DIR_SRC:.c=.o): CPPFLAGS += -DLS_DATADIR='"$(DATADIR)"'
$(BUILD)/obj/$(DATA_DIR_SRC:.c=.o): $(PREFIX_STAMP)

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# liblockstep.so -> liblockstep.so.0.MINOR (the SONAME) -> liblockstep.so.0.MINOR.PATCH.
# --no-undefined: the library needs libc and libsodium (replay signatures)
# alone: libfixmath is header-only here, xxhash is compiled in.
# The Makefile is a prerequisite: it names the SONAME, so a tree built before
# the name changed relinks.
$(LIB_SO): $(LIB_OBJ) Makefile
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--no-undefined $(LDFLAGS) -o $(LIB_SO_REAL) $(LIB_OBJ) $(LIB_LIBS)
	ln -sf $(notdir $(LIB_SO_REAL)) $(BUILD)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $@

$(TOOL): $(TOOL_OBJ) $(LIB_A)
	$(CC) $(ALLFLAGS) $(LDFLAGS) -o $@ $(TOOL_OBJ) $(LIB_A) $(LDLIBS_TOOL)

# --wrap lets tests count the library's heap allocations (tests/alloc_count.h).
TEST_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
$(TESTS): $(TEST_OBJ) $(LIB_A)
	$(CC) $(ALLFLAGS) $(TEST_WRAP) -o $@ $(TEST_OBJ) $(LIB_A) $(LDLIBS_TEST)

# Every module's Criterion binary, from the repository root (tests read tools/scenes),
# then the library-adoption checks of mk/library.mk (headers in C and C++,
# exported symbols, examples built from an installed tree).
test: test-units
	@$(MAKE) --no-print-directory test-library
.PHONY: test-units
test-units: $(TEST_BINS) $(TOOL)
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; $$t -j2 --timeout 600; done

# `make run`: car soccer (SPEC.md §15.2): a relay and four bot processes play
# tools/scenes/soccer.scene for a minute in rollback mode, then the score, every
# peer's checksum and the replay verification. ARGS come last and override
# (e.g. ARGS="--loss 0.2 --jitter 50", or "--scene tools/scenes/arena.scene --ticks 1200"
# for the push game).
RUN_ARGS ?= --scene tools/scenes/soccer.scene --mode rollback --ticks 3600
run: $(TOOL)
	$(TOOL) match $(RUN_ARGS) $(ARGS)

# One scene headless with a checksum per tick (SCENE=name of tools/scenes/*.scene).
SCENE ?= six_box_tower
sim: $(TOOL)
	$(TOOL) sim tools/scenes/$(SCENE).scene --checksums

# Installs the Debian packages that are missing; silent when all are present.
deps:
	@missing=""; for p in $(DEPS_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq || echo "deps: warning: some package indexes failed (mirror syncing?); using what was fetched"; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# Sanitized tests in their own build tree.
asan:
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) --no-print-directory BUILD=$(BUILD)/asan OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  test-units

SIM_DIRS := fixmath_phys/src fixmath_phys/include core
# The physics' public header names (ls/NAME.h), which replay/ and net/ never include.
PHYS_PUBLIC_NAMES = $(subst $(eval) ,|,$(basename $(notdir $(wildcard fixmath_phys/include/ls/*.h))))
# The one exemption from "no float": the renderer's conversions. Display only:
# they turn world state into floats for drawing and nothing converts back, so
# no float reaches the simulation, its snapshots or checksums (the header says more).
RENDER_FLOAT_H := fixmath_phys/include/ls/render_float.h
CODE_DIRS := fixmath_phys net replay tools core
C_FILES = $(shell find core fixmath_phys net replay tools tests examples -name '*.c' -o -name '*.h' -o -name '*.cpp' | grep -v node_modules | sort)
lint: $(LIB_A)
	@echo "lint: no float/double in simulation code"
	@! grep -rnwE 'float|double' $(SIM_DIRS) | grep -vE '^[^:]+:[0-9]+:\s*(//|/\*|\*)' | grep -v '^$(RENDER_FLOAT_H):'
	@echo "lint: no libfixmath cached or float functions outside tests"
	@! grep -rnE 'fix16_(exp|log|log2|slog2|sin|cos|tan|asin|acos|atan|atan2|sin_parabola|from_float|from_dbl|to_float|to_dbl)\s*\(|F16\(' $(CODE_DIRS) --include='*.c' --include='*.h'
	@echo "lint: the library needs no compiled libfixmath symbol"
	@! nm -u $(LIB_A) | grep -E ' fix16_| fract32_'
	@echo "lint: replay/ and net/ know nothing of physics (no header of fixmath_phys/include, only core/'s); only net/uv/ includes <uv.h>"
	@! grep -rnE '#include "ls/($(PHYS_PUBLIC_NAMES))\.h"' replay/src replay/include replay/sign net/src net/include net/uv
	@! grep -rln '#include <uv.h>' net 2>/dev/null | grep -v '^net/uv/'
	@echo "lint: libwebsockets only in the lockstep program: tools/relay_ws.c, tools/ws_client.c (and the tests' probe)"
	@! grep -rln '#include <libwebsockets.h>' fixmath_phys net replay tools examples | grep -vE '^tools/(relay_ws|ws_client)\.c$$'
	@! nm -u $(LIB_A) | grep -E ' lws_'
	@echo "lint: net/ and replay/ private headers declare only functions marked private (a trailing _)"
	@! grep -nE '^[a-z].*\bls_[a-z0-9_]*[a-z0-9]\(' net/src/*.h replay/src/*.h
	@echo "lint: layering: math/ includes no other folder; collision/ includes math/ only"
	@! grep -rnE '#include "\.\./' fixmath_phys/src/math
	@! grep -rnE '#include "\.\./(world|dynamics|particles|vehicle|game)/' fixmath_phys/src/collision
	@echo "lint: the games (fixmath_phys/src/game/) use the public API only"
	@! grep -rnE '#include "\.\./' fixmath_phys/src/game
	@echo "lint: core/ (base, hash, rng, the error record, the one-walk cursor) includes only its own headers and the C library (and xxhash)"
	@! grep -rhoE '#include "[^"]+"' core | sed 's/^#include "//; s/"$$//' | sort -u | \
	  while read f; do [ -f core/include/$$f ] || [ -f core/src/$$f ] || echo "core/ includes $$f"; done | grep .
	@echo "lint: snapshot.c and the checksum are call lists: no subsystem's private header (world/state.h)"
	@! grep -nE '#include "\.\./' fixmath_phys/src/world/snapshot.c
	@echo "lint: clang-format"
	@clang-format --dry-run -Werror $(C_FILES)
	@echo "lint: ok"

format:
	clang-format -i $(C_FILES)

# Where <libfixmath/fix16.h> lives (public headers include it), for lockstep.pc.
FIXMATH_INCDIR := $(shell echo '\#include <libfixmath/fix16.h>' | $(CC) -E -x c - 2>/dev/null | \
  sed -n 's|^\# [0-9]* "\(.*\)/libfixmath/fix16.h".*|\1|p' | head -1)

# `make install-lib`: headers, static and shared library, lockstep.pc. Needs
# only what the library needs (libfixmath-dev, libxxhash-dev, libsodium-dev,
# libuv1-dev for the transport), not the CLI's libpng. `make install` adds the CLI, its
# manual page (tools/lockstep.1) and its scenes.
# LIBDIR (default PREFIX/lib) must lie under PREFIX: the Debian packages use
# /usr/lib/<multiarch triplet> (mk/deb.mk). lockstep.pc names it from
# ${prefix} and the CMake package finds PREFIX from its own place, so a staged
# or relocated tree works too.
LIBDIR ?= $(PREFIX)/lib
LIBDIR_REL = $(patsubst $(PREFIX)/%,%,$(LIBDIR))
CMAKEDIR = $(LIBDIR)/cmake/lockstep
# From CMAKEDIR up to PREFIX: one ".." per component of LIBDIR_REL/cmake/lockstep.
CMAKE_TO_PREFIX = $(subst $(eval) ,/,$(foreach c,$(subst /, ,$(LIBDIR_REL)) cmake lockstep,..))
.PHONY: install-lib
install-lib: $(LIB_A) $(LIB_SO)
	@case '$(LIBDIR)' in '$(PREFIX)'/?*) ;; *) echo "install: LIBDIR=$(LIBDIR) is not under PREFIX=$(PREFIX)"; exit 2;; esac
	install -d $(DESTDIR)$(PREFIX)/include/ls $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(CMAKEDIR)
	install -m 644 core/include/ls/*.h fixmath_phys/include/ls/*.h replay/include/ls/*.h net/include/ls/*.h \
	  $(DESTDIR)$(PREFIX)/include/ls/
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SO_REAL)) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/liblockstep.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR_REL@|$(LIBDIR_REL)|' -e 's|@VERSION@|$(LS_VERSION)|' \
	  -e 's|@REQUIRES_PRIVATE@|libsodium libuv|' -e 's|@FIXMATH_CFLAGS@|$(if $(FIXMATH_INCDIR),-I$(FIXMATH_INCDIR))|' \
	  tools/lockstep.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/lockstep.pc
	sed -e 's|@SONAME@|$(LIB_SONAME)|g' -e 's|@LIBDIR_REL@|$(LIBDIR_REL)|g' \
	  -e 's|@CMAKE_TO_PREFIX@|$(CMAKE_TO_PREFIX)|g' tools/lockstep-config.cmake.in \
	  > $(DESTDIR)$(CMAKEDIR)/lockstep-config.cmake
	sed -e 's|@VERSION@|$(LS_VERSION)|g' -e 's|@MAJOR@|$(LS_MAJOR)|g' \
	  -e 's|@MINOR@|$(LS_MINOR)|g' tools/lockstep-config-version.cmake.in \
	  > $(DESTDIR)$(CMAKEDIR)/lockstep-config-version.cmake

install: install-lib $(TOOL)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(DATADIR)/scenes $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(TOOL) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 tools/lockstep.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 tools/scenes/*.scene tools/scenes/*.obj $(DESTDIR)$(DATADIR)/scenes/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
