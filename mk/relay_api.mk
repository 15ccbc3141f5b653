# The control API of `lockstep relay --api HOST:PORT` (tools/relay_api.c: HTTP
# on libmicrohttpd, on the relay's libuv loop; tools/relay_api_json.c: the
# request bodies). libmicrohttpd is linked into the `lockstep` tool only, never
# into liblockstep, and only relay_api.c includes <microhttpd.h>.
DEPS_PKGS += libmicrohttpd-dev
# The Prometheus server the /metrics test starts (tests/test_relay_api.c).
DEPS_PKGS += prometheus
MHD_CFLAGS := $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
LDLIBS_TOOL += $(or $(shell pkg-config --libs libmicrohttpd 2>/dev/null),-lmicrohttpd)
$(BUILD)/obj/tools/relay_api.o: CPPFLAGS += $(MHD_CFLAGS)

# libFuzzer harness of the request-body parser (needs nothing but its own file).
FUZZ_HARNESSES += relay_api_json
$(BUILD)/fuzz/relay_api_json: fuzz/relay_api_json.c tools/relay_api_json.c tools/relay_api_json.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(INCLUDES) -Itools -o $@ fuzz/relay_api_json.c tools/relay_api_json.c
