# `lockstep render` (tools/render/: software rasteriser, one draw routine per
# shape kind, PNG through Debian's libpng) and `make pictures`, which
# regenerates the images README.md shows (tools/pictures/).
TOOL_SRC += $(wildcard tools/render/*.c)
DEPS_PKGS += libpng-dev
LDLIBS_TOOL += -lpng

PICTURES_DIR := tools/pictures
PICTURES_REPLAY := tools/crosscheck/arena.lsr

.PHONY: pictures
# One picture per interesting shipped scene, at a tick where something
# happens, and four frames of the recorded 4-player arena match (re-simulated
# from its inputs), and the desync picture (the arena match against a copy with
# one input byte changed: `lockstep replay diff --png`, the diverged body in
# magenta), and the rollback timeline of a lossy 3-bot match simulated on a
# fake clock (`lockstep timeline`: no sockets, no wall time). The output is
# deterministic: rerunning rewrites the same bytes.
pictures: $(TOOL)
	@mkdir -p $(PICTURES_DIR)
	$(TOOL) render tools/scenes/tower_struck.scene --tick 40 --ids --contacts --out $(PICTURES_DIR)/tower_struck.png
	$(TOOL) render tools/scenes/catapult.scene --tick 50 --out $(PICTURES_DIR)/catapult.png
	$(TOOL) render tools/scenes/rain_2000.scene --tick 150 --camera 8,10,11,0,1.2,0 --out $(PICTURES_DIR)/rain_2000.png
	$(TOOL) render tools/scenes/pyramid.scene --tick 300 --out $(PICTURES_DIR)/pyramid.png
	$(TOOL) render tools/scenes/two_ramps.scene --tick 90 --out $(PICTURES_DIR)/two_ramps.png
	$(TOOL) render tools/scenes/hull_pile.scene --tick 60 --camera 5,11,8,0,1.5,0 --out $(PICTURES_DIR)/hull_pile.png
	$(TOOL) render tools/scenes/compound_stairs.scene --tick 60 --camera 0,4.5,7.5,-3.5,1.6,0 --contacts \
	  --out $(PICTURES_DIR)/compound_stairs.png
	$(TOOL) render tools/scenes/mesh_terrain.scene --tick 150 --camera -13,9,11,-6,2,0 --contacts \
	  --out $(PICTURES_DIR)/mesh_terrain.png
	$(TOOL) render tools/scenes/ragdolls.scene --tick 150 --camera 9,9,12,-1,2,0 --out $(PICTURES_DIR)/ragdolls.png
	$(TOOL) render tools/scenes/falling_hinges.scene --tick 120 --out $(PICTURES_DIR)/falling_hinges.png
	$(TOOL) render $(PICTURES_REPLAY) --frames 0:1200:400 --size 320x200 --camera 0,17,21,0,0,0 \
	  --out $(PICTURES_DIR)/arena.png
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	$(TOOL) replay tamper $(PICTURES_REPLAY) $$d/tampered.lsr --tick 100 --player 2 >/dev/null && \
	{ $(TOOL) replay diff $(PICTURES_REPLAY) $$d/tampered.lsr --png $(PICTURES_DIR)/desync.png \
	  --ahead 150 --size 320x240 --camera top >$$d/out; s=$$?; tail -1 $$d/out; test $$s = 3; }
	$(TOOL) timeline --players 3 --ticks 600 --delay 1 --loss 0.15 --delay-ms 40 --jitter 30 --fault-seed 7 \
	  --out $(PICTURES_DIR)/rollback_timeline.svg
