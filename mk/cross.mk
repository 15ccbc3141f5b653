# Cross-platform determinism proof (tools/crosscheck/README.md).
#   make deps-cross   cross compilers, qemu-user, wasm32 toolchain, libfixmath per arch
#   make crosscheck   build the golden runner for every target, run it, print the matrix
#   make goldens      regenerate tools/crosscheck/goldens/ from the native gcc -O2 runner
# Everything is built under $(XC_BUILD), never in the shared $(BUILD).

XC_BUILD ?= build-cross
XC_DIR := tools/crosscheck

# gcc-multilib is not installable next to Debian's gcc-*-linux-gnu cross
# compilers (gcc-12-aarch64-linux-gnu Conflicts: gcc-multilib), so the i386
# target uses what gcc-multilib would bring for -m32: libc6-dev-i386 and
# lib32gcc-12-dev. The i386 runner then runs natively on the x86-64 kernel.
DEPS_CROSS_PKGS := libc6-dev-i386 lib32gcc-12-dev \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  gcc-s390x-linux-gnu libc6-dev-s390x-cross \
  qemu-user clang lld wasi-libc libclang-rt-14-dev-wasm32 \
  gcc-mingw-w64-x86-64 wine64
# libfixmath-dev of every architecture (Multi-Arch: same, static library only,
# no dependencies): the exactness checker links each arch's oracle.
DEPS_CROSS_ARCHS := i386 arm64 s390x
DEPS_CROSS_FOREIGN := $(addprefix libfixmath-dev:,amd64 $(DEPS_CROSS_ARCHS))

.PHONY: deps-cross crosscheck goldens crosscheck-build

# Installs what is missing; silent when everything is present. Node.js (for
# the WASI runner) comes from Debian only when no `node` is on PATH. A failed
# index download (a mirror mid-sync, seen for bookworm-security/i386) must not
# stop the install: apt then uses the indexes it did fetch.
deps-cross:
	@SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); set -e; \
	update=0; for a in $(DEPS_CROSS_ARCHS); do \
	  dpkg --print-foreign-architectures | grep -qx $$a || { $$SUDO dpkg --add-architecture $$a; update=1; }; \
	done; \
	missing=""; for p in $(DEPS_CROSS_PKGS) $(DEPS_CROSS_FOREIGN); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	command -v node >/dev/null || missing="$$missing nodejs"; \
	if [ -n "$$missing" ] || [ $$update = 1 ]; then \
	  echo "deps-cross: installing:$$missing"; \
	  $$SUDO apt-get update -qq || echo "deps-cross: warning: some package indexes failed (mirror syncing?); using what was fetched"; \
	fi; \
	if [ -n "$$missing" ]; then \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# ---------------------------------------------------------------------------
# Targets of the matrix. Per target: compiler, flags, link flags, how to run a
# binary (prefix), the work budget of its runs (body-ticks per scene: a scene
# of B bodies runs min(ticks, max(120, budget / B)) ticks; empty = every tick)
# and the exactness checker's arguments (`skip:REASON` where no libfixmath);
# XC_PREREQ: what must exist before its binaries are built.
XC_TARGETS := x86_64-gcc-O0 x86_64-gcc-O2 x86_64-gcc-O3-native x86_64-clang-O2 \
  x86_64-clang-O3-fastmath i386-gcc-O2 aarch64-gcc-O2 s390x-gcc-O2 wasm32-clang-O2 \
  x86_64-w64-mingw32
XC_GOLDEN_TARGET := x86_64-gcc-O2

XC_CC.x86_64-gcc-O0 := gcc
XC_CFLAGS.x86_64-gcc-O0 := -O0
XC_BUDGET.x86_64-gcc-O0 := 300000
XC_CC.x86_64-gcc-O2 := gcc
XC_CFLAGS.x86_64-gcc-O2 := -O2
XC_CC.x86_64-gcc-O3-native := gcc
# -march=native makes gcc's inlining, hence its flow warnings, depend on the CI
# machine's CPU: a maybe-uninitialized found only there stays a warning (lint
# and the main build still judge warnings); this target judges bits.
XC_CFLAGS.x86_64-gcc-O3-native := -O3 -march=native -Wno-error=maybe-uninitialized
XC_CC.x86_64-clang-O2 := clang
XC_CFLAGS.x86_64-clang-O2 := -O2
# -ffast-math last, so it also overrides -ffp-contract=off: the engine has no
# floating point, so float flags cannot change a bit.
XC_CC.x86_64-clang-O3-fastmath := clang
XC_CFLAGS.x86_64-clang-O3-fastmath := -O3 -ffast-math
XC_CC.i386-gcc-O2 := gcc
# Without gcc-multilib (see above) -m32 finds no <asm/errno.h>; the x86 one is
# the generic, width-independent header, so it is taken from the amd64 tree.
XC_CFLAGS.i386-gcc-O2 := -m32 -O2 -idirafter /usr/include/x86_64-linux-gnu
XC_LDFLAGS.i386-gcc-O2 := -static
# Natively, or under qemu-i386 on a kernel without 32-bit support (i386_run.sh).
XC_EXEC.i386-gcc-O2 := sh $(XC_DIR)/i386_run.sh
XC_CC.aarch64-gcc-O2 := aarch64-linux-gnu-gcc
XC_CFLAGS.aarch64-gcc-O2 := -O2
XC_LDFLAGS.aarch64-gcc-O2 := -static
XC_EXEC.aarch64-gcc-O2 := qemu-aarch64
XC_BUDGET.aarch64-gcc-O2 := 300000
XC_EXACT.aarch64-gcc-O2 := --random 2000000 --div-step 35 --sqrt-step 305
XC_CC.s390x-gcc-O2 := s390x-linux-gnu-gcc
XC_CFLAGS.s390x-gcc-O2 := -O2
XC_LDFLAGS.s390x-gcc-O2 := -static
XC_EXEC.s390x-gcc-O2 := qemu-s390x
XC_BUDGET.s390x-gcc-O2 := 300000
XC_EXACT.s390x-gcc-O2 := --random 2000000 --div-step 35 --sqrt-step 305
# wasm-ld's default 64 KiB stack, placed after the data, is silently overrun
# by ls_scene_load's 64 KiB buffer; a 1 MiB stack first in memory traps
# instead. The memory is fixed (initial = maximum = 512 MiB): Node's WASI
# breaks after a memory.grow (tools/crosscheck/wasi_run.mjs), so malloc must
# fail visibly rather than grow.
XC_CC.wasm32-clang-O2 := clang --target=wasm32-wasi
XC_CFLAGS.wasm32-clang-O2 := -O2
XC_LDFLAGS.wasm32-clang-O2 := -Wl,--stack-first -Wl,-z,stack-size=1048576 \
  -Wl,--initial-memory=536870912 -Wl,--max-memory=536870912
XC_EXEC.wasm32-clang-O2 := node --no-warnings $(XC_DIR)/wasi_run.mjs
XC_EXACT.wasm32-clang-O2 := skip:no libfixmath build for wasm32 in Debian
# Windows: Debian's mingw-w64 gcc (msvcrt; -std=c11 selects mingw-w64's C99
# printf family), linked statically, run by Debian's wine64 with a prefix of
# its own under $(XC_BUILD) and no display (tools/crosscheck/wine_run.sh).
# mingw-w64 does not search /usr/include: the arch-independent headers the
# engine takes from Debian (libfixmath's, xxhash.h) are linked into a folder of
# their own rather than putting glibc's headers on the path.
XC_CC.x86_64-w64-mingw32 := x86_64-w64-mingw32-gcc
XC_MINGW_INC := $(XC_BUILD)/x86_64-w64-mingw32/include
XC_CFLAGS.x86_64-w64-mingw32 := -O2 -isystem $(XC_MINGW_INC)
XC_LDFLAGS.x86_64-w64-mingw32 := -static
XC_PREREQ.x86_64-w64-mingw32 := $(XC_MINGW_INC)/xxhash.h
XC_EXEC.x86_64-w64-mingw32 := WINEPREFIX=$(abspath $(XC_BUILD))/wine bash $(XC_DIR)/wine_run.sh
XC_EXACT.x86_64-w64-mingw32 := skip:no libfixmath build for mingw-w64 in Debian

# Descriptions for the matrix rows.
XC_DESC.x86_64-gcc-O0 := x86-64 gcc -O0
XC_DESC.x86_64-gcc-O2 := x86-64 gcc -O2 (golden)
XC_DESC.x86_64-gcc-O3-native := x86-64 gcc -O3 -march=native
XC_DESC.x86_64-clang-O2 := x86-64 clang -O2
XC_DESC.x86_64-clang-O3-fastmath := x86-64 clang -O3 -ffast-math
XC_DESC.i386-gcc-O2 := i386 gcc -m32 -O2
XC_DESC.aarch64-gcc-O2 := aarch64 gcc -O2, qemu-aarch64
XC_DESC.s390x-gcc-O2 := s390x (big-endian) gcc -O2, qemu-s390x
XC_DESC.wasm32-clang-O2 := wasm32-wasi clang -O2, node WASI
XC_DESC.x86_64-w64-mingw32 := x86-64 Windows mingw-w64 gcc -O2, wine64

XC_BASEFLAGS = -std=c11 $(WARN) -ffp-contract=off -Icore/include -Ifixmath_phys/include -Ireplay/include -Inet/include
# The runner also reads replays (the `replay` job), so it links the replay reader.
XC_REPLAY_SRC := $(wildcard replay/src/*.c)
# ... and SyncTest (net/src/synctest.c: libc and ls/base.h only, no libuv or libsodium).
XC_SYNCTEST_SRC := net/src/synctest.c
XC_PHYS_DEPS := $(PHYS_SRC) $(XC_REPLAY_SRC) $(XC_SYNCTEST_SRC) net/include/ls/net_synctest.h $(PHYS_H) $(wildcard core/include/ls/*.h fixmath_phys/include/ls/*.h \
  replay/src/*.h replay/include/ls/*.h) mk/cross.mk
XC_SCENES := $(sort $(wildcard tools/scenes/*.scene))
XC_SLEEP_SCENE := $(XC_DIR)/scenes/falling_boxes.scene
XC_SLEEP_MAX := 3000
# Box2D's determinism pair for joints: falling_hinges stepped until every body
# sleeps; its golden is the sleep tick and the checksum there (job hinges+sleep).
XC_HINGES_SCENE := tools/scenes/falling_hinges.scene
XC_INPUT_SCENE := tools/scenes/arena.scene
XC_INPUT_SEED := 20240601
# A 4-player arena match recorded natively by `lockstep replay record` (made
# anew by `make goldens`); every target must re-simulate it to the recorded checksums.
XC_REPLAY := $(XC_DIR)/arena.lsr
# A 4-bot car-soccer match in rollback mode, recorded by `lockstep match
# --replay` (the bots steer from their worlds, so it is a real game's inputs).
XC_REPLAY_SOCCER := $(XC_DIR)/soccer.lsr
# SyncTest jobs (SPEC.md "Rollback and SyncTest"): after every tick, roll back
# k = 1..8 ticks (cycling) and re-simulate; the first simulation's stream is
# printed and compared like any job's (the arena and soccer ones with the input script).
XC_SYNCTEST_K := 8
XC_SYNCTEST_TICKS := 240
# soccer: vehicles, the game words and a mesh, driven by the input script.
XC_SYNCTEST_JOBS := arena+synctest ragdolls+synctest mesh_terrain+synctest soccer+synctest
# Jobs: every shipped scene, the scripted-input game, the sleep goldens, the replay, SyncTest.
XC_JOBS := $(notdir $(basename $(XC_SCENES))) arena+input sleep hinges+sleep replay replay_soccer $(XC_SYNCTEST_JOBS)
XC_PAR ?= 2
# Compiler command lines are shown with V=1.
XC_Q := $(if $(filter 1,$(V)),,@)

xc_bin = $(XC_BUILD)/$(1)/$(2)$(if $(findstring wasm32,$(1)),.wasm)$(if $(findstring mingw,$(1)),.exe)
# The worker pool links pthreads; wasm32-wasi has none and Windows uses none
# (workers.c runs serially there).
xc_threads = $(if $(findstring wasm32,$(1))$(findstring mingw,$(1)),,-pthread)
xc_run = $(XC_EXEC.$(1)) $(call xc_bin,$(1),xc_runner)
xc_budget = $(if $(XC_BUDGET.$(1)),--budget $(XC_BUDGET.$(1)))
xc_outs = $(foreach j,$(XC_JOBS),$(XC_BUILD)/out/$(1)/$(j).out) \
  $(if $(findstring skip:,$(XC_EXACT.$(1))),,$(XC_BUILD)/out/$(1)/exact.out)

# A run's output file always gets written: the exit status goes in as its last
# line and the matrix judges it, so one failing target does not hide the rest.
define XC_TARGET_RULES
$(call xc_bin,$(1),xc_runner): $(XC_DIR)/xc_runner.c $(XC_PHYS_DEPS) | $(XC_PREREQ.$(1))
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: build $$@"
	$(XC_Q)$(XC_CC.$(1)) $(XC_BASEFLAGS) $(XC_CFLAGS.$(1)) -o $$@ $(XC_DIR)/xc_runner.c $(PHYS_SRC) $(XC_REPLAY_SRC) $(XC_SYNCTEST_SRC) $(XC_LDFLAGS.$(1)) $(call xc_threads,$(1))

$(call xc_bin,$(1),xc_exact): $(XC_DIR)/xc_exact.c $(XC_PHYS_DEPS) | $(XC_PREREQ.$(1))
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: build $$@"
	$(XC_Q)$(XC_CC.$(1)) $(XC_BASEFLAGS) $(XC_CFLAGS.$(1)) -o $$@ $(XC_DIR)/xc_exact.c $(XC_LDFLAGS.$(1)) -llibfixmath

$(XC_BUILD)/out/$(1)/%.out: tools/scenes/%.scene $(call xc_bin,$(1),xc_runner)
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: $(1) $$*"
	@s=$$$$(date +%s%N); { $(call xc_run,$(1)) $$< $(call xc_budget,$(1)) 2>&1; echo "exit $$$$?"; } > $$@.tmp; \
	  echo "time $$$$(( ($$$$(date +%s%N) - s) / 1000000 )) ms" >> $$@.tmp; mv $$@.tmp $$@

$(XC_BUILD)/out/$(1)/%+synctest.out: tools/scenes/%.scene $(call xc_bin,$(1),xc_runner)
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: $(1) $$*+synctest"
	@s=$$$$(date +%s%N); { $(call xc_run,$(1)) $$< --synctest $(XC_SYNCTEST_K) --max-ticks $(XC_SYNCTEST_TICKS) $$(if $$(filter arena soccer,$$*),--input-seed $(XC_INPUT_SEED)) $(call xc_budget,$(1)) 2>&1; echo "exit $$$$?"; } > $$@.tmp; \
	  echo "time $$$$(( ($$$$(date +%s%N) - s) / 1000000 )) ms" >> $$@.tmp; mv $$@.tmp $$@

$(XC_BUILD)/out/$(1)/arena+input.out: $(XC_INPUT_SCENE) $(call xc_bin,$(1),xc_runner)
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: $(1) arena+input"
	@s=$$$$(date +%s%N); { $(call xc_run,$(1)) $$< --input-seed $(XC_INPUT_SEED) $(call xc_budget,$(1)) 2>&1; echo "exit $$$$?"; } > $$@.tmp; \
	  echo "time $$$$(( ($$$$(date +%s%N) - s) / 1000000 )) ms" >> $$@.tmp; mv $$@.tmp $$@

$(XC_BUILD)/out/$(1)/sleep.out: $(XC_SLEEP_SCENE) $(call xc_bin,$(1),xc_runner)
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: $(1) sleep"
	@s=$$$$(date +%s%N); { $(call xc_run,$(1)) $$< --until-sleep $(XC_SLEEP_MAX) 2>&1; echo "exit $$$$?"; } > $$@.tmp; \
	  echo "time $$$$(( ($$$$(date +%s%N) - s) / 1000000 )) ms" >> $$@.tmp; mv $$@.tmp $$@

$(XC_BUILD)/out/$(1)/hinges+sleep.out: $(XC_HINGES_SCENE) $(call xc_bin,$(1),xc_runner)
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: $(1) hinges+sleep"
	@s=$$$$(date +%s%N); { $(call xc_run,$(1)) $$< --until-sleep $(XC_SLEEP_MAX) 2>&1; echo "exit $$$$?"; } > $$@.tmp; \
	  echo "time $$$$(( ($$$$(date +%s%N) - s) / 1000000 )) ms" >> $$@.tmp; mv $$@.tmp $$@

$(XC_BUILD)/out/$(1)/replay.out: $(XC_REPLAY) $(call xc_bin,$(1),xc_runner)
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: $(1) replay"
	@s=$$$$(date +%s%N); { $(call xc_run,$(1)) --replay $$< 2>&1; echo "exit $$$$?"; } > $$@.tmp; \
	  echo "time $$$$(( ($$$$(date +%s%N) - s) / 1000000 )) ms" >> $$@.tmp; mv $$@.tmp $$@

$(XC_BUILD)/out/$(1)/replay_soccer.out: $(XC_REPLAY_SOCCER) $(call xc_bin,$(1),xc_runner)
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: $(1) replay_soccer"
	@s=$$$$(date +%s%N); { $(call xc_run,$(1)) --replay $$< 2>&1; echo "exit $$$$?"; } > $$@.tmp; \
	  echo "time $$$$(( ($$$$(date +%s%N) - s) / 1000000 )) ms" >> $$@.tmp; mv $$@.tmp $$@

$(XC_BUILD)/out/$(1)/exact.out: $(call xc_bin,$(1),xc_exact)
	@mkdir -p $$(dir $$@)
	@echo "crosscheck: $(1) exactness"
	@s=$$$$(date +%s%N); { $(XC_EXEC.$(1)) $$< $(XC_EXACT.$(1)) 2>&1; echo "exit $$$$?"; } > $$@.tmp; \
	  echo "time $$$$(( ($$$$(date +%s%N) - s) / 1000000 )) ms" >> $$@.tmp; mv $$@.tmp $$@
endef
$(foreach t,$(XC_TARGETS),$(eval $(call XC_TARGET_RULES,$(t))))

# (also used by `make windows`, mk/windows.mk)
$(XC_MINGW_INC)/xxhash.h:
	@mkdir -p $(dir $@)
	ln -sfn /usr/include/libfixmath $(dir $@)libfixmath
	ln -sfn /usr/include/xxhash.h $@

XC_ALL_OUTS := $(foreach t,$(XC_TARGETS),$(call xc_outs,$(t)))
XC_ROWS = $(foreach t,$(XC_TARGETS),'$(t)|$(XC_DESC.$(t))|$(if $(XC_BUDGET.$(t)),$(XC_BUDGET.$(t)),full)|$(XC_EXACT.$(t))')

crosscheck-build: $(foreach t,$(XC_TARGETS),$(call xc_bin,$(t),xc_runner) \
  $(if $(findstring skip:,$(XC_EXACT.$(t))),,$(call xc_bin,$(t),xc_exact)))

# The matrix, with when, where and at which commit it was made, is also written
# to $(XC_RESULTS): commit it, then `make readme` regenerates README's matrix.
XC_RESULTS ?= $(XC_DIR)/results/latest.txt

# Runs in a sub-make with $(XC_PAR) jobs and -k, so a target that fails to
# build shows as failed cells next to the others (outputs are cached by make: a
# target's runs are redone when its binary or a scene changes), then compares.
crosscheck:
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory -k -j$(XC_PAR) $(XC_ALL_OUTS); \
	echo "crosscheck: runs took $$(( $$(date +%s) - start )) s"
	@XC_BUILD=$(XC_BUILD) bash $(XC_DIR)/selftest.sh $(XC_GOLDEN_TARGET)
	@XC_BUILD=$(XC_BUILD) XC_PAR=$(XC_PAR) XC_JOBS='$(XC_JOBS)' XC_RESULTS=$(XC_RESULTS) bash $(XC_DIR)/matrix.sh $(XC_ROWS)

# Regenerates the goldens from the golden target's full runs (and records the
# replay jobs' matches anew with this engine: arena.lsr is byte-identical
# everywhere; soccer.lsr is a real 4-bot rollback match over loopback, so its
# bytes depend on timing, never its checksums).
goldens: $(TOOL)
	$(TOOL) replay record $(XC_INPUT_SCENE) --ticks 1200 --seed 7 --players 4 --out $(XC_REPLAY)
	$(TOOL) match --peers 4 --ticks 3600 --mode rollback --scene tools/scenes/soccer.scene \
	  --seed 3 --tick-rate 300 --replay $(XC_REPLAY_SOCCER) --no-progress >/dev/null
	@$(MAKE) --no-print-directory -j$(XC_PAR) $(call xc_outs,$(XC_GOLDEN_TARGET))
	@XC_BUILD=$(XC_BUILD) XC_JOBS='$(XC_JOBS)' XC_INPUT='$(XC_INPUT_SCENE) --input-seed $(XC_INPUT_SEED)' \
	  XC_SLEEP='$(XC_SLEEP_SCENE) --until-sleep $(XC_SLEEP_MAX)' \
	  XC_HINGES_SLEEP='$(XC_HINGES_SCENE) --until-sleep $(XC_SLEEP_MAX)' \
	  bash $(XC_DIR)/goldens.sh $(XC_GOLDEN_TARGET) '$(XC_DESC.$(XC_GOLDEN_TARGET))'
