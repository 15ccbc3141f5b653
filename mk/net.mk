# net/: the relay wire protocol, sans-IO relay and peer cores (in liblockstep.a),
# and the libuv transport (net/uv/, linked into the tool only: the only file
# that includes <uv.h>).
LIB_SRC += $(wildcard net/src/*.c)
INCLUDES += -Inet/include
TOOL_SRC += net/uv/transport_uv.c
LDLIBS_TOOL += -luv

# Loopback tests with real UDP sockets (links the libuv transport; runs the
# tool's relay/bot/match processes, so `make test` builds the tool first).
NET_UDP_TEST := $(BUILD)/test_net_udp
TEST_BINS += $(NET_UDP_TEST)
$(NET_UDP_TEST): $(BUILD)/obj/net/tests/test_udp.o $(BUILD)/obj/net/uv/transport_uv.o $(LIB_A) $(TOOL)
	$(CC) $(ALLFLAGS) -o $@ $(BUILD)/obj/net/tests/test_udp.o $(BUILD)/obj/net/uv/transport_uv.o \
	  $(LIB_A) -lcriterion -luv -lpthread -lm $(LIB_LIBS)

# libFuzzer harness: decoder round trip + relay and peer state machines (fuzz/wire.c).
FUZZ_HARNESSES += wire

# `make bench-net` (a section of `make bench`): relay throughput and added
# latency for S sessions x 4 peers at 60 Hz vs a raw recvmmsg/sendmmsg echo.
BENCH_NET := $(BUILD)/bench_net
BENCH_NET_SECONDS ?= 3
BENCH_NET_SESSIONS ?= 1,16,32
BENCH_SECTIONS += bench-net
.PHONY: bench-net
bench-net: $(BENCH_NET)
	@echo "== 5. relay: throughput and added latency, S sessions x 4 peers at 60 Hz vs raw UDP echo"
	@mkdir -p $(BENCH_OUT) && $(BENCH_NET) $(BENCH_NET_SECONDS) $(BENCH_NET_SESSIONS) $(BENCH_OUT)/bench-net.csv
$(BENCH_NET): $(BUILD)/obj/net/bench/relay_bench.o $(BUILD)/obj/net/uv/transport_uv.o $(LIB_A)
	$(CC) $(ALLFLAGS) -o $@ $^ -luv -lm
