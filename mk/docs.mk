# `make docs`: the HTML reference of the installed public headers (their `///`
# comments) and the task guides of docs/guide/, by Doxygen, into
# $(BUILD)/docs/html (open index.html). tools/docs/Doxyfile says what is read.
#
# Why it fails on any warning: an undocumented public declaration, a broken
# reference or a malformed command is a bug in what users read first, and a
# warning-free run is the only state that stays clean. Doxygen's own
# FAIL_ON_WARNINGS fails the run; the log is also checked, so a Doxygen that
# logs a warning without failing cannot let one through.
#
# Why doxygen is in DEPS_PKGS (so `make deps` installs it): CI runs `make
# deps` then `make docs` on a clean machine.
DEPS_PKGS += doxygen
DOCS_DIR := $(BUILD)/docs
DOCS_LOG := $(DOCS_DIR)/warnings.log


# Why it needs the CLI and the library: the guides' outputs and option lists are
# made by this build (tools/docs/transcripts.sh), never pasted, so they cannot
# go stale. After `make test` (as in CI) both are built and this costs ~2 s.
.PHONY: docs
docs: $(TOOL) $(LIB_A)
	@command -v doxygen >/dev/null || { echo "docs: doxygen is missing: run 'make deps'"; exit 1; }
	@rm -rf $(DOCS_DIR) && mkdir -p $(DOCS_DIR)
	@sh tools/docs/transcripts.sh $(TOOL) $(LIB_A) $(DOCS_DIR)/generated "$(CC)" "$(LDLIBS_TOOL)"
	@{ cat tools/docs/Doxyfile; \
	   echo 'PROJECT_NUMBER = $(LS_VERSION)'; \
	   echo 'EXAMPLE_PATH += $(DOCS_DIR)/generated'; \
	   echo 'OUTPUT_DIRECTORY = $(DOCS_DIR)'; \
	   echo 'WARN_LOGFILE = $(DOCS_LOG)'; } | doxygen - || \
	  { echo "docs: doxygen failed:"; cat $(DOCS_LOG); exit 1; }
	@if [ -s $(DOCS_LOG) ]; then echo "docs: $$(wc -l <$(DOCS_LOG)) warnings:"; cat $(DOCS_LOG); exit 1; fi
	@echo "docs: $(DOCS_DIR)/html/index.html: $$(ls $(DOCS_DIR)/html/*.html | wc -l) pages, 0 warnings"
