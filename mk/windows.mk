# Windows build (issue 33): `make windows` builds liblockstep.a and lockstep.exe
# for x86-64 Windows with Debian's mingw-w64 gcc (`make deps-cross` installs
# it) into $(WIN_BUILD); `make windows-check` also runs the tool under wine64
# (tools/crosscheck/wine_run.sh). Debian ships no mingw-w64 libuv, libsodium
# or libpng, so this build is the core library, the replay module without
# signatures (replay/nosign/sign_none.c answers "needs libsodium") and the
# SyncTest harness; the tool has the commands that need nothing more
# (LS_CLI_CORE in tools/lockstep.c): sim, demo, fx, replay and version, not
# relay, bot, match, keygen or render. The crosscheck's Windows target
# (mk/cross.mk) proves the simulation bit-identical there.
WIN_CC ?= x86_64-w64-mingw32-gcc
WIN_AR ?= x86_64-w64-mingw32-ar
WIN_BUILD ?= $(BUILD)/windows
WIN_CFLAGS ?= -O2
WIN_FLAGS = -std=c11 $(WARN) -ffp-contract=off -isystem $(XC_MINGW_INC) \
  -Icore/include -Ifixmath_phys/include -Ireplay/include -Inet/include $(WIN_CFLAGS)
WIN_LIB_SRC := $(PHYS_SRC) $(wildcard replay/src/*.c) replay/nosign/sign_none.c net/src/synctest.c
WIN_TOOL_SRC := tools/lockstep.c tools/cli.c tools/json.c tools/progress.c tools/cmd_sim.c \
  tools/cmd_demo.c tools/cmd_fx.c $(filter-out tools/cmd_replay_picture.c,$(wildcard tools/cmd_replay*.c)) \
  tools/nopicture/replay_picture_none.c $(DATA_DIR_SRC)
WIN_LIB := $(WIN_BUILD)/liblockstep.a
WIN_TOOL := $(WIN_BUILD)/lockstep.exe
WIN_LIB_OBJ := $(WIN_LIB_SRC:%.c=$(WIN_BUILD)/obj/%.o)
WIN_TOOL_OBJ := $(WIN_TOOL_SRC:%.c=$(WIN_BUILD)/obj/%.o)

.PHONY: windows windows-check
windows: $(WIN_LIB) $(WIN_TOOL)

$(WIN_BUILD)/obj/%.o: %.c | $(XC_MINGW_INC)/xxhash.h
	@mkdir -p $(dir $@)
	$(WIN_CC) $(WIN_FLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(WIN_BUILD)/obj/tools/%.o: CPPFLAGS += -DLS_CLI_CORE
$(WIN_BUILD)/obj/tools/cli.o: CPPFLAGS += -DLS_DATADIR='"$(DATADIR)"'

$(WIN_LIB): $(WIN_LIB_OBJ)
	rm -f $@ && $(WIN_AR) rcs $@ $^

$(WIN_TOOL): $(WIN_TOOL_OBJ) $(WIN_LIB)
	$(WIN_CC) -static -o $@ $(WIN_TOOL_OBJ) $(WIN_LIB) -pthread

-include $(WIN_LIB_OBJ:.o=.d) $(WIN_TOOL_OBJ:.o=.d)

# Under wine64: the version, a scene's per-tick checksums against its
# crosscheck golden, the verification of both committed recordings, and a
# match recorded on Windows byte for byte equal to the native tool's recording.
WIN_RUN = WINEPREFIX=$(abspath $(XC_BUILD))/wine bash $(XC_DIR)/wine_run.sh $(WIN_TOOL)
WIN_CHECK_SCENE := six_box_tower
windows-check: $(WIN_TOOL) $(TOOL)
	@set -e; d=$(WIN_BUILD)/check; rm -rf $$d; mkdir -p $$d; \
	$(WIN_RUN) version; \
	$(WIN_RUN) sim tools/scenes/$(WIN_CHECK_SCENE).scene --checksums | grep -E '^[0-9]+ [0-9a-f]{16}$$' > $$d/sim.sum; \
	grep -E '^[0-9]+ [0-9a-f]{16}$$' $(XC_DIR)/goldens/$(WIN_CHECK_SCENE).sum | cmp -s - $$d/sim.sum || \
	  { echo "windows-check: $(WIN_CHECK_SCENE) differs from its golden"; exit 1; }; \
	echo "windows-check: sim $(WIN_CHECK_SCENE): $$(wc -l < $$d/sim.sum) ticks equal to the golden"; \
	$(WIN_RUN) replay verify $(XC_REPLAY); \
	$(WIN_RUN) replay verify $(XC_REPLAY_SOCCER); \
	rec="replay record $(XC_INPUT_SCENE) --ticks 600 --seed 7 --players 4 --no-progress"; \
	$(WIN_RUN) $$rec --out $$d/windows.lsr; \
	$(TOOL) $$rec --out $$d/native.lsr > /dev/null; \
	cmp $$d/windows.lsr $$d/native.lsr; \
	echo "windows-check: a recording made on Windows is byte-identical to the native one"
