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

# The whole library is instrumented, not just the entry point: its sources are
# compiled once with the sanitizers and libFuzzer's coverage (fuzzer-no-link)
# into one archive that every harness links. (Each harness used to compile all
# of LIB_SRC itself: seven serial builds of the library, ~10 of CI's minutes.)
# LIB_SRC is complete only after every fragment, hence the second expansion.
FUZZ_OBJ_DIR := $(BUILD)/fuzz-obj
FUZZ_COMMA := ,
FUZZ_LIB := $(BUILD)/fuzz/liblockstep-fuzz.a
FUZZ_OBJ_FLAGS := $(subst -fsanitize=fuzzer$(FUZZ_COMMA),-fsanitize=fuzzer-no-link$(FUZZ_COMMA),$(FUZZ_FLAGS))
.SECONDEXPANSION:
$(FUZZ_LIB): $$(patsubst %.c,$(FUZZ_OBJ_DIR)/%.o,$$(LIB_SRC))
	@rm -f $@
	$(AR) rcs $@ $^
$(FUZZ_OBJ_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_OBJ_FLAGS) $(INCLUDES) -MMD -MP -c $< -o $@

$(BUILD)/fuzz/%: fuzz/%.c $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(INCLUDES) -o $@ $< $(FUZZ_LIB) $(FUZZ_LIBS)

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
