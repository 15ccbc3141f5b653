# `make fuzz`: libFuzzer harnesses for every parser, built with clang and run
# for FUZZ_SECONDS each from a committed seed corpus (fuzz/corpus/NAME/).
# A module adds its harness with `FUZZ_HARNESSES += NAME` and fuzz/NAME.c.
FUZZ_HARNESSES += scene
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_FLAGS := -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

.PHONY: fuzz fuzz-build
# Expanded in the recipe, after every fragment has added its harness.
fuzz-build:
	@$(MAKE) --no-print-directory $(FUZZ_HARNESSES:%=$(BUILD)/fuzz/%)

# Each harness links the library sources directly: the whole library is
# instrumented, not just the entry point.
$(BUILD)/fuzz/%: fuzz/%.c $(LIB_SRC)
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
