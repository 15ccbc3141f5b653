# `lockstep relay --ws HOST:PORT` and `lockstep bot --ws URL` (tools/ws_client.c,
# the bot's WebSocket). `lockstep relay --ws` (tools/relay_ws.c: WebSocket clients on the
# relay's libuv loops, libwebsockets with its libuv event library;
# tools/relay_ws_frame.c: fragments to datagrams and the synthetic addresses;
# SPEC.md §17.16). libwebsockets is linked into the `lockstep` tool only, never
# into liblockstep, and only relay_ws.c and ws_client.c include <libwebsockets.h>. Debian
# ships lws' libuv support as a plugin lws loads at run time
# (libwebsockets-evlib-uv).
DEPS_PKGS += libwebsockets-dev libwebsockets-evlib-uv
LWS_CFLAGS := $(shell pkg-config --cflags libwebsockets 2>/dev/null)
LWS_LIBS := $(or $(shell pkg-config --libs libwebsockets 2>/dev/null),-lwebsockets)
LDLIBS_TOOL += $(LWS_LIBS)
$(BUILD)/obj/tools/relay_ws.o $(BUILD)/obj/tools/ws_client.o: CPPFLAGS += $(LWS_CFLAGS)

# The tests' WebSocket client (tests/ws/ws_probe.c): carries a real peer's UDP
# datagrams over a WebSocket (a bridge), or sends the bad input of the tests.
WS_PROBE := $(BUILD)/ws_probe
$(WS_PROBE): tests/ws/ws_probe.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLFLAGS) $(LWS_CFLAGS) -o $@ $< $(LWS_LIBS) -luv
test-units: $(WS_PROBE)

# libFuzzer harness of the fragment -> datagram path (fuzz/relay_ws_frame.c).
FUZZ_HARNESSES += relay_ws_frame
# It drives the relay core too, so it links the instrumented library (mk/fuzz.mk).
$(BUILD)/fuzz/relay_ws_frame: fuzz/relay_ws_frame.c tools/relay_ws_frame.c tools/relay_ws_frame.h $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(INCLUDES) -Itools -o $@ fuzz/relay_ws_frame.c tools/relay_ws_frame.c \
	  $(FUZZ_LIB) $(FUZZ_LIBS)
