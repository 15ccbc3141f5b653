# Replay module (replay/): recorder, reader, verifier in liblockstep.a; the
# `lockstep replay ...` commands (tools/cmd_replay*.c); the reader's libFuzzer
# harness (fuzz/replay.c); `make bench-replay`, section 4 of `make bench`.
LIB_SRC += $(wildcard replay/src/*.c)
# Signed recordings (replay/sign/): native builds only, with Debian's libsodium;
# the portable replay/src/ (crosscheck, wasm viewer) has no cryptography.
LIB_SRC += $(wildcard replay/sign/*.c)
LIB_LIBS += -lsodium
LDLIBS_TOOL += -lsodium
LDLIBS_TEST += -lsodium
DEPS_PKGS += libsodium-dev
FUZZ_LIBS += -lsodium
INCLUDES += -Ireplay/include
LDLIBS_TOOL += -lpthread
FUZZ_HARNESSES += replay
BENCH_SECTIONS += bench-replay

# Verify throughput of a 4-player arena replay (60 s at 60 Hz), best of
# BENCH_REPEATS runs, with 1 and 2 jobs; and the file size per player per tick.
BENCH_REPLAY_FILE = $(BUILD)/bench-replay.lsr
.PHONY: bench-replay
bench-replay: $(TOOL)
	@mkdir -p $(BENCH_OUT); csv=$(BENCH_OUT)/bench-replay.csv; : > $$csv; \
	echo "== 4. replay: verify a recorded 4-player arena match (3600 ticks = 60 s at 60 Hz)"; \
	$(TOOL) replay record tools/scenes/arena.scene --ticks 3600 --seed 1 --players 4 \
	  --out $(BENCH_REPLAY_FILE) >/dev/null || exit 1; \
	set -- $$($(TOOL) replay info $(BENCH_REPLAY_FILE) | \
	  sed -n 's/.*inputs \([0-9.]*\) B, inputs+checksums \([0-9.]*\) B, whole file \([0-9.]*\) B/\1 \2 \3/p'); \
	printf '%-44s %10s\n' "bytes/player/tick: inputs" "$$1" "bytes/player/tick: inputs + checksums" "$$2" \
	  "bytes/player/tick: whole file (+ keyframes)" "$$3"; \
	echo "replay,arena_4p,ours,input_bytes_per_player_tick,$$1,B" >> $$csv; \
	echo "replay,arena_4p,ours,input_checksum_bytes_per_player_tick,$$2,B" >> $$csv; \
	echo "replay,arena_4p,ours,file_bytes_per_player_tick,$$3,B" >> $$csv; \
	for j in 1 2; do \
	  best=0; cpu=0; for r in $$(seq $(BENCH_REPEATS)); do \
	    set -- $$($(TOOL) replay verify $(BENCH_REPLAY_FILE) --jobs $$j --stats --no-progress | \
	      awk '/^stats:/ {print $$10, $$(NF-3)}'); \
	    [ -n "$$1" ] || exit 1; [ $$1 -gt $$best ] && best=$$1 && cpu=$$2; \
	  done; \
	  xrt=$$(awk -v t=$$best 'BEGIN {printf "%.1f", t / 60}'); \
	  printf '%-44s %10s ticks/s  %7sx real time  (%s ticks per cpu-second)\n' \
	    "verify, $$j job(s), best of $(BENCH_REPEATS)" $$best $$xrt $$cpu; \
	  echo "replay,arena_4p_jobs$$j,ours,ticks_per_s,$$best,1/s" >> $$csv; \
	  echo "replay,arena_4p_jobs$$j,ours,x_real_time,$$xrt,x" >> $$csv; \
	  echo "replay,arena_4p_jobs$$j,ours,ticks_per_cpu_s,$$cpu,1/s" >> $$csv; \
	done
