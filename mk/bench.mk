# `make bench`: performance as ratios measured in one run (never part of `make test`).
BENCH_FX := $(BUILD)/bench_fx
BENCH_FX_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/bench/*.c))

.PHONY: bench
bench: $(BENCH_FX) $(TOOL)
	$(BENCH_FX)

$(BENCH_FX): $(BENCH_FX_OBJ) $(LIB_A)
	$(CC) $(ALLFLAGS) -o $@ $(BENCH_FX_OBJ) $(LIB_A) $(LDLIBS_TEST)
