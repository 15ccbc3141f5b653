# net/: the relay wire protocol, sans-IO relay and peer cores, and the libuv
# transport (public API ls/net_uv.h; net/uv/transport_uv.c is the only file
# that includes <uv.h>), all in liblockstep. A game hosts a relay or a peer on
# its own uv loop through ls/net_uv.h, or drives the cores with its own sockets
# (the sans-IO cores never call the transport). Wire v2 authenticates every
# datagram with libsodium, which the library already links for signed replays
# (mk/replay.mk: LIB_LIBS, LDLIBS_TOOL, LDLIBS_TEST, FUZZ_LIBS carry -lsodium);
# the library now links libuv too (lockstep.pc: Requires.private libuv).
LIB_SRC += $(wildcard net/src/*.c) net/uv/transport_uv.c
INCLUDES += -Inet/include
LIB_LIBS += -luv
LDLIBS_TOOL += -luv
LDLIBS_TEST += -luv
FUZZ_LIBS += -luv

# Loopback tests with real UDP sockets (links the libuv transport; runs the
# tool's relay/bot/match processes, so `make test` builds the tool first):
# test_udp.c probes a relay thread (net/tests/udp_relay.h) with raw sockets and
# runs the tool's processes; test_udp_peers.c plays in-process peers, honest and
# modified, against it.
NET_UDP_TEST := $(BUILD)/test_net_udp
NET_UDP_OBJ := $(BUILD)/obj/net/tests/test_udp.o $(BUILD)/obj/net/tests/test_udp_peers.o
TEST_BINS += $(NET_UDP_TEST)
$(NET_UDP_TEST): $(NET_UDP_OBJ) $(LIB_A) $(TOOL)
	$(CC) $(ALLFLAGS) -o $@ $(NET_UDP_OBJ) \
	  $(LIB_A) -lcriterion -lpthread -lm $(LIB_LIBS)

# libFuzzer harness: decoder round trip + relay and peer state machines (fuzz/wire.c).
FUZZ_HARNESSES += wire

# `make bench-net` (a section of `make bench`): relay throughput and added
# latency for S sessions x 4 peers at 60 Hz vs a raw recvmmsg/sendmmsg echo
# (goal: added p99 < 1 ms at 64 sessions x 4 peers, authentication on), then
# sessions per core (issue 30): the relay pinned to CPU 0 and the load
# generator to CPU 1, a ramp over S (BENCH_NET_RAMP seconds per point, from 64
# sessions doubling up to BENCH_NET_RAMP_MAX, then two bisection steps) finds
# the largest S whose added p99 stays under 1 ms, and prints the relay's CPU per
# session and the sessions one full core of relay CPU carries (goal >= 1000).
# It says when the load generator, not the relay, stopped the ramp. Then a
# 2-worker row (a relay process pinned to each core, half the sessions each, the
# generator sharing both cores: all a 2-core machine allows) at S and 2 S, and
# the relay core alone (no sockets, polled every ms). BENCH_NET_RAMP=0 skips
# the ramp and the 2-worker row. About two minutes by default.
# `build/bench_net 0 - - 0 0 512` runs the core alone at 512 sessions (profiling).
BENCH_NET := $(BUILD)/bench_net
BENCH_NET_SECONDS ?= 3
BENCH_NET_SESSIONS ?= 1,16,64
BENCH_NET_RAMP ?= 2
BENCH_NET_RAMP_MAX ?= 2048
BENCH_SECTIONS += bench-net
.PHONY: bench-net
bench-net: $(BENCH_NET)
	@echo "== 5. relay: throughput and added latency, S sessions x 4 peers at 60 Hz vs raw UDP echo; sessions per core"
	@mkdir -p $(BENCH_OUT) && $(BENCH_NET) $(BENCH_NET_SECONDS) $(BENCH_NET_SESSIONS) $(BENCH_OUT)/bench-net.csv \
	  $(BENCH_NET_RAMP) $(BENCH_NET_RAMP_MAX)
$(BENCH_NET): $(BUILD)/obj/net/bench/relay_bench.o $(LIB_A)
	$(CC) $(ALLFLAGS) -o $@ $^ -lm $(LIB_LIBS)
