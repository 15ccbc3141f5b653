# The library as a user adopts it (issue 17): every public header compiles as
# C11 and as C++11/17 with g++ and clang++ and links; the shared library
# exports exactly the LS_API functions; the examples build from an installed
# tree through pkg-config and CMake and run; and the same from the Debian
# packages (mk/deb.mk, test-deb). `make test` runs all four (test-library).
PUBLIC_HEADERS := $(sort $(wildcard core/include/ls/*.h fixmath_phys/include/ls/*.h replay/include/ls/*.h net/include/ls/*.h))
DEPS_PKGS += g++ pkg-config cmake
HDR_TEST_DIR := $(BUILD)/header-test
CXX_HEADER_COMPILERS := g++ clang++
CXX_HEADER_STDS := c++11 c++17

.PHONY: test-library test-headers test-exports test-examples
# test-examples last, alone: its `make install PREFIX=<stage>` rebuilds the
# library with the stage's data directory (ls_data_dir) while the others link
# or read it.
test-library: test-headers test-exports test-deb
	@$(MAKE) --no-print-directory test-examples

# C: one translation unit including every header, -std=c11 -pedantic.
# C++: tests/library/all_headers.cpp with each compiler and standard, linked
# against liblockstep.a and run.
test-headers: $(LIB_A)
	@mkdir -p $(HDR_TEST_DIR)
	@{ for h in $(PUBLIC_HEADERS); do echo "#include \"ls/$$(basename $$h)\""; done; \
	   echo 'int main(void) { return ls_version_string()[0] == 0; }'; } > $(HDR_TEST_DIR)/all_headers.c
	$(CC) -std=c11 -Wall -Wextra -Wpedantic -Werror $(INCLUDES) $(HDR_TEST_DIR)/all_headers.c $(LIB_A) $(LIB_LIBS) -o $(HDR_TEST_DIR)/c11
	$(HDR_TEST_DIR)/c11
	@set -e; n=1; for cxx in $(CXX_HEADER_COMPILERS); do for std in $(CXX_HEADER_STDS); do \
	  echo "$$cxx -std=$$std tests/library/all_headers.cpp"; \
	  $$cxx -std=$$std -Wall -Wextra -Wpedantic -Werror $(INCLUDES) tests/library/all_headers.cpp \
	    $(LIB_A) $(LIB_LIBS) -o $(HDR_TEST_DIR)/cxx_$$cxx_$$std; \
	  $(HDR_TEST_DIR)/cxx_$$cxx_$$std; n=$$((n + 1)); \
	done; done; echo "headers: $$n passed, 0 failed (C11 + $(words $(CXX_HEADER_COMPILERS)) compilers x $(words $(CXX_HEADER_STDS)) C++ standards)"

test-exports: $(LIB_SO)
	sh tests/library/check_exports.sh $(LIB_SO_REAL) $(LIB_A) $(PUBLIC_HEADERS)

# Installs into $(BUILD)/stage, so it needs the CLI as well (the relay it runs).
test-examples: $(LIB_A) $(LIB_SO) $(TOOL)
	sh tests/library/examples.sh $(BUILD)
