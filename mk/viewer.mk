# Browser replay viewer (tools/viewer/): the simulation library and the
# viewer API (tools/viewer/api.c) built for wasm32-wasi with clang and Debian's
# wasi-libc, as the crosscheck's wasm32 target is; a static page drawing with
# three.js from npm (pinned in tools/viewer/package-lock.json).
#   make deps-viewer   chromium, the wasm toolchain (apt), npm ci in tools/viewer
#   make viewer        build into $(BUILD)/viewer/
#   make viewer-serve  serve it on 127.0.0.1:$(VIEWER_PORT) for a person
#   make viewer-test   headless Chromium: the arena replay verifies with the native
#                      final checksum, a tampered copy reports its tick (marked on the
#                      timeline, the diverged body in magenta), a screenshot
#                      shows the scene, a relay's recording of a 2-bot match where
#                      bot 0 diverges shows its disputed ticks and the native verdicts
#   make bench-viewer  re-simulation ticks/s in headless Chromium vs native (bench section)
VIEWER_DIR   = $(BUILD)/viewer
VIEWER_WASM  = $(VIEWER_DIR)/lockstep.wasm
VIEWER_PORT ?= 8000
VIEWER_NODE_MODULES := tools/viewer/node_modules
VIEWER_STAMP := $(VIEWER_NODE_MODULES)/.package-lock.json
VIEWER_PAGE  := index.html engine.js shapes3d.js viewer.js
VIEWER_REPLAY := tools/crosscheck/arena.lsr
VIEWER_DEPS_PKGS := chromium clang lld wasi-libc libclang-rt-14-dev-wasm32
VIEWER_CC    := clang --target=wasm32-wasi
# A reactor module (no main; the page calls _initialize then the exports). The
# 1 MiB stack goes first in memory so an overflow traps (see mk/cross.mk); the
# heap may grow: the page's WASI shim re-reads the memory on every call.
VIEWER_FLAGS  = -std=c11 $(WARN) -ffp-contract=off -O2 -mexec-model=reactor \
  -Icore/include -Ifixmath_phys/include -Ireplay/include -Itools
VIEWER_LDFLAGS := -Wl,--stack-first -Wl,-z,stack-size=1048576
VIEWER_C     := tools/viewer/api.c tools/render/load.c $(PHYS_SRC) $(wildcard replay/src/*.c)
VIEWER_H     := tools/viewer/api.h tools/render/render.h $(PHYS_H) $(wildcard \
  core/include/ls/*.h fixmath_phys/include/ls/*.h replay/src/*.h replay/include/ls/*.h)
VIEWER_BENCH_NATIVE = $(BUILD)/viewer_bench_native
VIEWER_BENCH_FILE   = $(BUILD)/bench-viewer.lsr

.PHONY: deps-viewer viewer viewer-serve viewer-test bench-viewer
BENCH_SECTIONS += bench-viewer

# apt packages that are missing (silent when present), Node.js from Debian only
# when there is no `node`, then `npm ci` from the committed lock file when
# node_modules is missing or older than the lock file.
deps-viewer:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(VIEWER_DEPS_PKGS) $$(command -v node >/dev/null || echo nodejs npm)"
	@if [ ! -f $(VIEWER_STAMP) ] || [ tools/viewer/package-lock.json -nt $(VIEWER_STAMP) ]; then \
	  echo "deps-viewer: npm ci in tools/viewer"; \
	  cd tools/viewer && npm ci --no-audit --no-fund --loglevel=error; \
	fi

$(VIEWER_WASM): $(VIEWER_C) $(VIEWER_H) mk/viewer.mk
	@mkdir -p $(dir $@)
	$(VIEWER_CC) $(VIEWER_FLAGS) -o $@ $(VIEWER_C) $(VIEWER_LDFLAGS)

# The page's files are symlinked (edit and reload); replays and scenes copied.
viewer: $(VIEWER_WASM)
	@test -d $(VIEWER_NODE_MODULES)/three || { echo "viewer: three.js is missing: run 'make deps-viewer'"; exit 1; }
	@mkdir -p $(VIEWER_DIR)/replays $(VIEWER_DIR)/scenes
	@for f in $(VIEWER_PAGE); do ln -sf $(abspath tools/viewer)/$$f $(VIEWER_DIR)/$$f; done
	@ln -sfn $(abspath $(VIEWER_NODE_MODULES)) $(VIEWER_DIR)/node_modules
	@cp $(VIEWER_REPLAY) $(VIEWER_DIR)/replays/
	@cp tools/scenes/*.scene tools/scenes/*.obj $(VIEWER_DIR)/scenes/
	@echo "viewer: built $(VIEWER_DIR) ($$(wc -c < $(VIEWER_WASM)) bytes of wasm)"

viewer-serve: viewer
	node tools/viewer/serve.mjs $(VIEWER_DIR) $(VIEWER_PORT)

# Expected results come from the native tool: its `replay verify` lines and
# the recording's last checksum. The disputed recording is made by a relay with
# two bots, bot 0 diverging at tick 40 (`match --perturb`, exit 3: the bots'
# final checksums differ; 120 ticks at 600 Hz, well under a second).
viewer-test: deps-viewer viewer $(TOOL)
	@set -e; d=$(VIEWER_DIR)/replays; \
	$(TOOL) replay tamper $(VIEWER_REPLAY) $$d/tampered.lsr --tick 500 --player 1 >/dev/null; \
	ok=$$($(TOOL) replay verify $(VIEWER_REPLAY) --no-progress | head -1); \
	final=$$($(TOOL) replay dump $(VIEWER_REPLAY) --json | grep -o '"checksum":"[0-9a-f]*"' | tail -1 | cut -d'"' -f4); \
	bad=$$($(TOOL) replay verify $$d/tampered.lsr --no-progress | head -1 || true); \
	body=$$($(TOOL) replay verify $$d/tampered.lsr --json --no-progress | grep -o '"body":[0-9]*' | head -1 | cut -d: -f2 || true); \
	rm -f $$d/disputed.lsr; \
	$(TOOL) match --peers 2 --ticks 120 --tick-rate 600 --perturb 0:40 --scene tools/scenes/arena.scene \
	  --replay $$d/disputed.lsr --no-progress >/dev/null || test -s $$d/disputed.lsr; \
	dok=$$($(TOOL) replay verify $$d/disputed.lsr --no-progress | sed -n 1p); \
	dsum=$$($(TOOL) replay verify $$d/disputed.lsr --no-progress | sed -n 2p); \
	echo "viewer-test: native: '$$ok', final $$final; tampered: '$$bad', body $$body; disputed: '$$dok', '$$dsum'"; \
	node tools/viewer/test.mjs test $(VIEWER_DIR) replays/$(notdir $(VIEWER_REPLAY)) "$$ok" "$$final" \
	  replays/tampered.lsr "$$bad" $(VIEWER_DIR)/screenshot.png replays/disputed.lsr "$$dok" "$$dsum" "$$body"

$(VIEWER_BENCH_NATIVE): $(BUILD)/obj/tools/viewer/bench_native.o $(BUILD)/obj/tools/viewer/api.o \
  $(BUILD)/obj/tools/render/load.o $(LIB_A)
	$(CC) $(ALLFLAGS) -o $@ $^ -lm

# 6. The same 60 s 4-player arena match re-simulated and verified from tick 0 by
# the viewer's API: natively (gcc, $(CFLAGS)) and as wasm in headless Chromium.
# Without `make deps-viewer` (no chromium, three.js or wasm toolchain) it says so and skips.
bench-viewer: $(TOOL) $(VIEWER_BENCH_NATIVE)
	@mkdir -p $(BENCH_OUT); csv=$(BENCH_OUT)/bench-viewer.csv; : > $$csv; \
	echo "== 6. viewer: re-simulate + verify a 4-player arena replay (3600 ticks), wasm in headless Chromium vs native"; \
	if [ ! -x /usr/bin/chromium ] || [ ! -d $(VIEWER_NODE_MODULES)/puppeteer-core ] || \
	   [ ! -f /usr/lib/wasm32-wasi/crt1-reactor.o ]; then \
	  echo "  skipped: needs chromium, the wasm32 toolchain and tools/viewer/node_modules ('make deps-viewer')"; exit 0; fi; \
	$(MAKE) --no-print-directory -s viewer >/dev/null || exit 1; mkdir -p $(VIEWER_DIR)/bench; \
	$(TOOL) replay record tools/scenes/arena.scene --ticks 3600 --seed 1 --players 4 \
	  --out $(VIEWER_BENCH_FILE) >/dev/null || exit 1; \
	cp $(VIEWER_BENCH_FILE) $(VIEWER_DIR)/bench/arena3600.lsr; \
	set -- $$($(VIEWER_BENCH_NATIVE) $(VIEWER_BENCH_FILE) $(BENCH_REPEATS)); nt=$$2; nf=$$3; \
	set -- $$(node tools/viewer/test.mjs bench $(VIEWER_DIR) bench/arena3600.lsr $(BENCH_REPEATS) | tail -1); wt=$$2; wf=$$3; \
	[ -n "$$nt" ] && [ -n "$$wt" ] || { echo "bench-viewer: a run failed"; exit 1; }; \
	[ "$$nf" = "$$wf" ] || { echo "bench-viewer: final checksums differ: native $$nf, wasm $$wf"; exit 1; }; \
	ratio=$$(awk -v w=$$wt -v n=$$nt 'BEGIN {printf "%.2f", w / n}'); \
	printf '%-44s %10s ticks/s\n' "native (gcc), best of $(BENCH_REPEATS)" $$nt "wasm32 in headless Chromium, best of $(BENCH_REPEATS)" $$wt; \
	printf '%-44s %10s   (goal >= 0.50; same final checksum %s)\n' "ratio wasm / native" $$ratio $$nf; \
	echo "viewer,arena_4p_3600,native,ticks_per_s,$$nt,1/s" >> $$csv; \
	echo "viewer,arena_4p_3600,wasm_chromium,ticks_per_s,$$wt,1/s" >> $$csv; \
	echo "viewer,arena_4p_3600,wasm_chromium,ratio_to_native,$$ratio,x" >> $$csv
