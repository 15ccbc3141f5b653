# `make fuzz`: libFuzzer harnesses for every parser, built with clang and run
# for FUZZ_SECONDS each from a committed seed corpus (fuzz/corpus/NAME/).
# A module adds its harness with `FUZZ_HARNESSES += NAME` and fuzz/NAME.c.
FUZZ_HARNESSES += scene snapshot
FUZZ_HARNESSES += obj
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_FLAGS := -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

.PHONY: fuzz fuzz-build
# Expanded in the recipe, after every fragment has added its harness.
fuzz-build:
	@$(MAKE) --no-print-directory $(FUZZ_HARNESSES:%=$(BUILD)/fuzz/%)

# Each harness links the library sources directly: the whole library is
# instrumented, not just the entry point.
$(BUILD)/fuzz/%: fuzz/%.c $(LIB_SRC) $(wildcard core/include/ls/*.h core/src/*.h fixmath_phys/include/ls/*.h fixmath_phys/src/*/*.h replay/include/ls/*.h replay/src/*.h net/include/ls/*.h net/src/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(INCLUDES) -o $@ $< $(LIB_SRC) $(FUZZ_LIBS)

fuzz: fuzz-build
	@set -e; for h in $(FUZZ_HARNESSES); do \
	  mkdir -p $(BUILD)/fuzz/corpus-$$h; \
	  echo "== fuzz $$h for $(FUZZ_SECONDS) s"; \
	  log=$(BUILD)/fuzz/$$h.log; \
	  $(BUILD)/fuzz/$$h -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/$$h- \
	    $(BUILD)/fuzz/corpus-$$h fuzz/corpus/$$h >$$log 2>&1 || { tail -40 $$log; exit 1; }; \
	  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|Done' $$log; \
	done

# `make fuzz-long`: each harness for FUZZ_LONG_SECONDS (or FUZZ_LONG_SECONDS_NAME)
# from fuzz/corpus/NAME, then the inputs that add coverage are merged back into
# fuzz/corpus/NAME (commit them). A crash stops the run with its input under
# $(BUILD)/fuzz/; fix it and add the input to fuzz/corpus/NAME, where every
# `make fuzz` replays it first (fuzz/README.md). Results: $(BUILD)/fuzz/long.txt.
FUZZ_LONG_SECONDS ?= 1800
.PHONY: fuzz-long
fuzz-long: fuzz-build
	@set -e; : > $(BUILD)/fuzz/long.txt; for h in $(FUZZ_HARNESSES); do \
	  secs=$$(eval echo \$${FUZZ_LONG_SECONDS_$$h:-$(FUZZ_LONG_SECONDS)}); \
	  work=$(BUILD)/fuzz/long-$$h; mkdir -p $$work; log=$(BUILD)/fuzz/long-$$h.log; \
	  echo "== fuzz-long $$h for $$secs s"; \
	  $(BUILD)/fuzz/$$h -max_total_time=$$secs -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/$$h- $$work fuzz/corpus/$$h >$$log 2>&1 \
	    || { tail -40 $$log; exit 1; }; \
	  execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log); \
	  rss=$$(sed -n 's/^stat::peak_rss_mb: *//p' $$log); \
	  before=$$(ls fuzz/corpus/$$h | wc -l); \
	  $(BUILD)/fuzz/$$h -merge=1 -max_len=65536 fuzz/corpus/$$h $$work >>$$log 2>&1; \
	  after=$$(ls fuzz/corpus/$$h | wc -l); \
	  echo "$$h: $$execs executions in $$secs s, peak RSS $$rss MB, 0 crashes, corpus $$before -> $$after files" \
	    | tee -a $(BUILD)/fuzz/long.txt; \
	done
