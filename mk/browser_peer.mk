# Browser peer (tools/browser_peer/, issue 31): the sans-IO peer (net/src),
# the physics and the reference games built for wasm32-wasi as a reactor module
# with the viewer's toolchain (clang, Debian's wasi-libc), driven from
# JavaScript over a WebSocket to `lockstep relay --ws` (SPEC.md §17.17).
# libsodium comes from npm's libsodium-wrappers through a small import shim
# (tools/browser_peer/sodium/sodium.h says why); the native build is unchanged.
#   make deps-browser-peer  the wasm toolchain (apt), npm ci in tools/browser_peer
#   make browser-peer       build $(BUILD)/browser_peer/peer.wasm
#   make browser-peer-page  the page into $(BUILD)/browser_peer/ (serve it with
#                           tools/viewer/serve.mjs; join with a URL fragment, page.js)
#   make browser-peer-test  a relay with --ws, native `lockstep bot`s on UDP and the
#                           wasm peer (Node.js, then pages in headless Chromium) on
#                           WebSockets play soccer: equal final checksums, 0
#                           desyncs, the recording verifies
#   make browser-match      2 native bots + 2 pages (+ a spectator page) in headless
#                           Chromium, 1200 ticks at 60 Hz: the peers' table
#   make bench-browser-peer soccer ms/tick: wasm in Chromium and Node.js vs native
BP_DIR   = $(BUILD)/browser_peer
BP_WASM  = $(BP_DIR)/peer.wasm
BP_NODE_MODULES := tools/browser_peer/node_modules
BP_STAMP := $(BP_NODE_MODULES)/.package-lock.json
BP_NET_SRC := net/src/peer.c net/src/rollback.c net/src/wire.c net/src/outbox.c \
  net/src/auth.c net/src/state_send.c net/src/spectator.c
BP_C     := tools/browser_peer/api.c tools/browser_peer/sodium_shim.c $(BP_NET_SRC) $(PHYS_SRC)
BP_H     := tools/browser_peer/sodium/sodium.h $(PHYS_H) $(wildcard fixmath_phys/include/ls/*.h \
  net/include/ls/*.h net/src/*.h)
# As the viewer (mk/viewer.mk): the 1 MiB stack first in memory so an overflow
# traps; the heap may grow (peer.js re-reads the memory on every call).
# -Itools/browser_peer/sodium makes <sodium.h> the shim: wasi-libc's sysroot has no
# other, and the native build never has this folder on its path.
BP_FLAGS  = -std=c11 $(WARN) -ffp-contract=off -O2 -mexec-model=reactor \
  -Ifixmath_phys/include -Inet/include -Itools/browser_peer/sodium
BP_LDFLAGS := -Wl,--stack-first -Wl,-z,stack-size=1048576
BP_TICKS ?= 1200
BP_KEYS_TICKS ?= 600
BP_TICK_RATE ?= 120
# The relay's and the native bot's sends (the UDP side; a WebSocket is never faulted).
BP_FAULTS ?= --loss 0.1 --jitter 50
# The wasm peer is killed here (node_match.sh --restart), the page reloaded (--reload).
BP_RESTART_TICK ?= 300
BP_SCENE := tools/scenes/soccer.scene
BP_PAGE := index.html page.js peer.js

.PHONY: deps-browser-peer browser-peer browser-peer-page browser-peer-test browser-match

deps-browser-peer:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(VIEWER_DEPS_PKGS) $$(command -v node >/dev/null || echo nodejs npm)"
	@if [ ! -f $(BP_STAMP) ] || [ tools/browser_peer/package-lock.json -nt $(BP_STAMP) ]; then \
	  echo "deps-browser-peer: npm ci in tools/browser_peer"; \
	  cd tools/browser_peer && npm ci --no-audit --no-fund --loglevel=error; \
	fi

$(BP_WASM): $(BP_C) $(BP_H) mk/browser_peer.mk
	@mkdir -p $(dir $@)
	$(VIEWER_CC) $(BP_FLAGS) -o $@ $(BP_C) $(BP_LDFLAGS)

browser-peer: $(BP_WASM)
	@echo "browser-peer: built $(BP_WASM) ($$(wc -c < $(BP_WASM)) bytes of wasm)"

# First bad credentials, scenes and bytes into the wasm peer (selftest.mjs), then
# matches of the wasm peer against native bots on UDP: in Node.js (node_match.sh,
# one native bot) with its car driven by the soccer bot (the same C code as the
# native bot's, reading the wasm peer's predicted world), by a key pattern set
# from JavaScript (bp_set_input), and by the bot under $(BP_FAULTS) on the UDP
# side (both directions), and killed at tick $(BP_RESTART_TICK) and started again as a new
# process that must rejoin (node_match.sh --restart); then in headless Chromium
# (browser_match.mjs: two native bots and two pages, the first driven by keys
# puppeteer presses), once clean with a third page watching as a spectator, once
# with the same faults on the UDP side, and one native bot and two pages, the
# second reloaded at tick $(BP_RESTART_TICK) (it must rejoin). Without the wasm
# toolchain or tools/browser_peer/node_modules it says so and passes, without
# chromium it skips the pages ('make deps-browser-peer').
BP_NODE_OK = [ -f /usr/lib/wasm32-wasi/crt1-reactor.o ] && command -v node >/dev/null && \
  [ -d $(BP_NODE_MODULES)/ws ] && [ -d $(BP_NODE_MODULES)/libsodium-wrappers ]
BP_PAGE_OK = [ -x /usr/bin/chromium ] && [ -d $(BP_NODE_MODULES)/puppeteer-core ]
BP_MATCH = node tools/browser_peer/browser_match.mjs $(TOOL) $(BP_DIR) $(BP_SCENE)
browser-peer-test: $(TOOL)
	@if ! { $(BP_NODE_OK); }; then \
	  echo "browser-peer-test: skipped: needs the wasm32 toolchain, node and tools/browser_peer/node_modules ('make deps-browser-peer')"; \
	  exit 0; fi; \
	$(MAKE) --no-print-directory -s browser-peer >/dev/null || exit 1; \
	node tools/browser_peer/selftest.mjs $(BP_WASM) $(BP_SCENE) || exit 1; \
	echo "browser-peer-test: soccer bot in wasm, $(BP_TICKS) ticks at $(BP_TICK_RATE) Hz"; \
	tools/browser_peer/node_match.sh $(TOOL) $(BP_WASM) $(BP_SCENE) $(BP_TICKS) $(BP_TICK_RATE) || exit 1; \
	echo "browser-peer-test: keys set from JavaScript, $(BP_KEYS_TICKS) ticks at $(BP_TICK_RATE) Hz"; \
	tools/browser_peer/node_match.sh $(TOOL) $(BP_WASM) $(BP_SCENE) $(BP_KEYS_TICKS) $(BP_TICK_RATE) --keys || exit 1; \
	echo "browser-peer-test: soccer bot in wasm, faults on the UDP side ($(BP_FAULTS)), $(BP_TICKS) ticks at $(BP_TICK_RATE) Hz"; \
	tools/browser_peer/node_match.sh $(TOOL) $(BP_WASM) $(BP_SCENE) $(BP_TICKS) $(BP_TICK_RATE) -- $(BP_FAULTS) || exit 1; \
	echo "browser-peer-test: the wasm peer killed at tick $(BP_RESTART_TICK) and started again (a new process), $(BP_TICKS) ticks at $(BP_TICK_RATE) Hz"; \
	tools/browser_peer/node_match.sh $(TOOL) $(BP_WASM) $(BP_SCENE) $(BP_TICKS) $(BP_TICK_RATE) --restart $(BP_RESTART_TICK) || exit 1; \
	if ! { $(BP_PAGE_OK); }; then \
	  echo "browser-peer-test: the pages: skipped: needs chromium and puppeteer-core ('make deps-browser-peer')"; exit 0; fi; \
	$(MAKE) --no-print-directory -s browser-peer-page >/dev/null || exit 1; \
	$(BP_MATCH) $(BP_TICKS) $(BP_TICK_RATE) 2 2 $(BP_DIR)/screenshot.png --spectators 1 || exit 1; \
	$(BP_MATCH) $(BP_TICKS) $(BP_TICK_RATE) 2 2 -- $(BP_FAULTS) || exit 1; \
	echo "browser-peer-test: a page reloaded at tick $(BP_RESTART_TICK) (1 native + 2 pages), $(BP_TICKS) ticks at $(BP_TICK_RATE) Hz"; \
	$(BP_MATCH) $(BP_TICKS) $(BP_TICK_RATE) 1 2 --reload $(BP_RESTART_TICK)

# Issue 31's demonstration: two native bots and two pages in headless Chromium
# (and a third page as a spectator) play $(BP_MATCH_TICKS) ticks of soccer in real time ($(BP_MATCH_RATE) Hz) and
# print the peers' table; ARGS adds UDP fault options (ARGS="-- --loss 0.1 --jitter 50").
BP_MATCH_TICKS ?= 1200
BP_MATCH_RATE ?= 60
browser-match: $(TOOL)
	@if ! { $(BP_NODE_OK) && $(BP_PAGE_OK); }; then \
	  echo "browser-match: needs the wasm32 toolchain, chromium and tools/browser_peer/node_modules: run 'make deps-browser-peer'"; \
	  exit 1; fi
	@$(MAKE) --no-print-directory -s browser-peer-page >/dev/null
	$(BP_MATCH) $(BP_MATCH_TICKS) $(BP_MATCH_RATE) 2 2 $(BP_DIR)/screenshot.png --spectators 1 $(ARGS)

# The page: its files symlinked (edit and reload), the scene copied.
browser-peer-page: $(BP_WASM)
	@test -d $(BP_NODE_MODULES)/libsodium-wrappers || { echo "browser-peer-page: run 'make deps-browser-peer'"; exit 1; }
	@for f in $(BP_PAGE); do ln -sf $(abspath tools/browser_peer)/$$f $(BP_DIR)/$$f; done
	@ln -sfn $(abspath $(BP_NODE_MODULES)) $(BP_DIR)/node_modules
	@cp $(BP_SCENE) $(BP_DIR)/
	@echo "browser-peer-page: built $(BP_DIR)"

# The soccer game's cost per tick (4 soccer bots, bp_bench in api.c) as wasm in
# headless Chromium and in Node.js against the same function built natively
# (gcc, $(CFLAGS)) with the solver's scalar path and with its fastest one. Not
# in BENCH_SECTIONS yet. Needs what browser-peer-test's pages need.
BP_BENCH_NATIVE = $(BUILD)/browser_peer/bench_native
BP_BENCH_TICKS ?= 3600
$(BP_BENCH_NATIVE): tools/browser_peer/bench_native.c tools/browser_peer/api.c tools/browser_peer/api.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALLFLAGS) -Ifixmath_phys/include -Inet/include -o $@ tools/browser_peer/bench_native.c \
	  tools/browser_peer/api.c $(LIB_A) -lsodium -lm
.PHONY: bench-browser-peer
bench-browser-peer: $(BP_BENCH_NATIVE)
	@$(MAKE) --no-print-directory -s browser-peer-page >/dev/null
	@echo "== browser peer: soccer, 4 bots, $(BP_BENCH_TICKS) ticks from tick 0, best of $(BENCH_REPEATS)"; \
	set -- $$($(BP_BENCH_NATIVE) $(BP_SCENE) $(BP_BENCH_TICKS) $(BENCH_REPEATS)); ns=$$2; sum=$$3; na=$$5; path=$$7; \
	set -- $$(node tools/browser_peer/bench.mjs $(BP_DIR) $(BP_SCENE) $(BP_BENCH_TICKS) $(BENCH_REPEATS)); \
	wn=$$2; wnsum=$$3; wc=$$5; wcsum=$$6; \
	[ "$$sum" = "$$wnsum" ] && [ "$$sum" = "$$wcsum" ] || { echo "bench-browser-peer: checksums differ: native $$sum, node $$wnsum, chromium $$wcsum"; exit 1; }; \
	printf '%-40s %8s ms/tick\n' "native (gcc), solver scalar path" $$ns "native (gcc), solver $$path path" $$na \
	  "wasm32 in Node.js (V8)" $$wn "wasm32 in headless Chromium" $$wc; \
	echo "ratio wasm in Chromium / native: $$(awk -v w=$$wc -v n=$$ns 'BEGIN {printf "%.2f", n / w}') of the scalar path's speed (goal >= 0.7), $$(awk -v w=$$wc -v n=$$na 'BEGIN {printf "%.2f", n / w}') of the $$path path's; same final checksum $$sum"
