# `make bench`: performance as ratios measured in one run on one machine (never
# part of `make test`). `make deps-bench` installs the peer engines (Bullet, ODE),
# which only the bench binaries link; the library never does.
#
# Sections. `make bench` runs, at recipe time, every target named in
# BENCH_SECTIONS (fragments included after this one append, e.g.
# `BENCH_SECTIONS += bench-replay`), in the order of BENCH_ORDER; sections of
# BENCH_ORDER that no fragment provides print "not available yet".
# Contract for a section target:
#   - print its own table on stdout, starting with a `== N. title` line;
#   - write result rows to $(BENCH_OUT)/<target>.csv, one per line, no header:
#       section,case,engine,metric,value,unit
#     (e.g. `replay,pile_1000,ours,ticks_per_s,41234,1/s`). `make bench` merges
#     every section's rows and the machine description into
#     tools/bench/results/latest.csv.
BENCH_OUT      = $(BUILD)/bench-out
BENCH_RESULTS  = tools/bench/results
BENCH_REPEATS ?= 5
BENCH_SCENES  ?= tools/scenes/pyramid.scene tools/scenes/pile_1000.scene \
                 tools/scenes/rain_2000.scene tools/scenes/six_box_tower.scene \
                 tools/scenes/hull_pile.scene tools/scenes/mesh_terrain.scene \
                 tools/scenes/compound_stairs.scene tools/scenes/ragdolls.scene \
                 tools/bench/scenes/joint_grid.scene
# Our engine runs every scene with 1 worker ("ours") and with each count here
# ("ours_Nw"); the peers run single-threaded.
BENCH_THREADS ?= 2
BENCH_SECTIONS := bench-physics bench-fx bench-snapshot bench-cloth bench-vehicle bench-box3d $(BENCH_SECTIONS)
# number:target:title, in output order.
BENCH_ORDER = 1:bench-physics:physics 2:bench-fx:fixed-point 3:bench-snapshot:snapshot \
              4:bench-replay:replay 5:bench-net:relay 6:bench-viewer:viewer 7:bench-cloth:cloth \
              8:bench-vehicle:vehicle 9:bench-box3d:box3d \
              10:bench-browser-peer:browser peer 11:bench-ws-loss:websocket-loss
# 7. The Verlet cloth (issue 14) against Bullet's btSoftBody on the same scene
# file: a 64 x 64 cloth (bench only, tools/bench/scenes/).
BENCH_CLOTH_SCENE ?= tools/bench/scenes/cloth_64.scene
# 8. Ray-cast vehicles (issue 15) against Bullet's btRaycastVehicle: four cars
# on one 2048-triangle terrain (the scene is built in code by both binaries,
# tools/bench/vehicle_common.c), and ls_game_tick on a 4-car game scene.
BENCH_VEHICLE_GAME_SCENE ?= tools/scenes/soccer.scene
# 9. Box3D (Erin Catto's float engine, MIT) on its own benchmark scenes: its
# source tree (not part of this repository) is built by its CMake into
# $(BUILD)/box3d and linked only into the section's two bench binaries.
BOX3D_DIR ?= ../shared/anchors/box3d
BENCH_BOX3D_SCENES ?= large_pyramid many_pyramids joint_grid convex_pile rain
# Quality-only rows (one run each): Box3D's large_pyramid with base 20 and 40.
BENCH_BOX3D_QUALITY ?= pyramid_20 pyramid_40
# Scenes whose stages bench-box3d prints for both engines, 1 and 2 workers (one run each).
BENCH_BOX3D_PROFILE_SCENES ?= rain
# Repeats are the outer loop (every scene once, then again), the engines
# interleaved within a scene: the host's noise comes in stretches of minutes
# (a neighbour on the second core doubled both engines' 2-worker times for a
# whole scene's five repeats), and this way it falls on different scenes in
# different repeats, so each median stays clean.
BENCH_BOX3D_REPEATS ?= $(BENCH_REPEATS)
BENCH_DEPS_PKGS = libbullet-dev libode-dev pkg-config g++ cmake

BENCH_FX       = $(BUILD)/bench_fx
BENCH_PHYSICS  = $(BUILD)/bench_physics
BENCH_BULLET   = $(BUILD)/bench_bullet
BENCH_ODE      = $(BUILD)/bench_ode
BENCH_SNAPSHOT = $(BUILD)/bench_snapshot
BENCH_REPORT   = $(BUILD)/bench_report
BENCH_CLOTH    = $(BUILD)/bench_cloth
BENCH_CLOTH_BULLET = $(BUILD)/bench_cloth_bullet
BENCH_VEHICLE  = $(BUILD)/bench_vehicle
BENCH_VEHICLE_BULLET = $(BUILD)/bench_vehicle_bullet
BENCH_VEHICLE_GAME = $(BUILD)/bench_vehicle_game
BENCH_BOX3D_OURS = $(BUILD)/bench_box3d_ours
BENCH_BOX3D_PEER = $(BUILD)/bench_box3d_peer
BENCH_OBJ      = $(BUILD)/obj/tools/bench
# Clock and median: libc only, so every binary links it (bench_clock.h).
BENCH_CLOCK    = $(BENCH_OBJ)/bench_clock.o
BENCH_COMMON   = $(BENCH_OBJ)/bench_common.o $(BENCH_CLOCK)
# Bench binaries link only the physics objects (not liblockstep.a), so a module
# under construction elsewhere in the tree cannot break `make bench`.
BENCH_PHYS_OBJ = $(PHYS_SRC:%.c=$(BUILD)/obj/%.o)

# Peers: Debian's Bullet 3.24 (single precision) and ODE 0.16 (double precision).
# Recursive `=`: pkg-config runs only when a bench binary is built.
CXX            ?= g++
BULLET_CFLAGS   = $(patsubst -I%,-isystem %,$(shell pkg-config --cflags bullet 2>/dev/null || echo -I/usr/include/bullet))
BULLET_LIBS     = -lBulletDynamics -lBulletCollision -lLinearMath
BULLET_SOFT_LIBS = -lBulletSoftBody $(BULLET_LIBS)
BENCH_CXXFLAGS  = -std=c++17 -Wall -Wextra -ffp-contract=off -MMD -MP -pthread $(CFLAGS) $(EXTRA_CFLAGS)

.PHONY: bench deps-bench bench-physics bench-fx bench-snapshot bench-cloth bench-vehicle bench-box3d \
        bench-report bench-charts box3d-lib

deps-bench:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(DEPS_PKGS) $(BENCH_DEPS_PKGS)"
	@$(MAKE) --no-print-directory box3d-lib

bench:
	@rm -rf $(BENCH_OUT) && mkdir -p $(BENCH_OUT)
	@echo "make bench: building the bench binaries"
	@$(MAKE) --no-print-directory -s $(BENCH_PHYSICS) $(BENCH_FX) $(BENCH_SNAPSHOT) $(BENCH_CLOTH) $(BENCH_VEHICLE) $(BENCH_REPORT)
	@echo "make bench: every ratio below is measured in this one run on this machine"
	@fail=""; ran=""; \
	for e in $(BENCH_ORDER); do \
	  n=$${e%%:*}; rest=$${e#*:}; s=$${rest%%:*}; title=$${rest#*:}; \
	  case " $(BENCH_SECTIONS) " in \
	    *" $$s "*) echo; $(MAKE) --no-print-directory $$s || fail="$$fail $$s"; ran="$$ran $$s";; \
	    *) echo; echo "== $$n. $$title: not available yet (no '$$s' target in this tree)";; \
	  esac; \
	done; \
	for s in $(BENCH_SECTIONS); do \
	  case " $$ran " in *" $$s "*) ;; *) echo; $(MAKE) --no-print-directory $$s || fail="$$fail $$s";; esac; \
	done; \
	echo; $(MAKE) --no-print-directory bench-report || fail="$$fail bench-report"; \
	if [ -n "$$fail" ]; then echo "make bench: FAILED:$$fail"; exit 1; fi

# 1. Physics: every scene in every engine, repeats interleaved (scene by scene,
# engine after engine) so load from other processes hits all engines alike. A
# run that fails (e.g. an engine that cannot build a scene) is reported, the
# others go on, and the section fails at the end.
bench-physics: $(BENCH_PHYSICS) $(BENCH_REPORT)
	@mkdir -p $(BENCH_OUT) && rm -f $(BENCH_OUT)/bench-physics.csv
	@echo "== 1. physics: ms/tick, median of $(BENCH_REPEATS) fresh runs of each whole scene (interleaved)"
	@echo "  same scene files in every engine: dt 1092/65536 s, gravity -9.81, <= 4 contacts/pair,"
	@echo "  sleep below 0.05 m/s + 0.08 rad/s for 0.5 s, mu sqrt(a*b), e max(a,b), our collision filters."
	@echo "  ours: Q16.16, soft step: the scene's sub-steps x (solve + relax), 1 and $(BENCH_THREADS) workers."
	@echo "  peers: one step per tick, iterations = our passes (sub-steps x (solve + relax)), ERP 0.2, 1 thread."
	@echo "  Bullet 3.24: float, dbvt, SI solver, 0.04 m margin, split impulse > 4 cm, 1 friction row/point."
	@echo "  ODE 0.16: double, hash space, QuickStep, CFM 1e-5, Approx1 friction. Hulls: btConvexHullShape"
	@echo "  (5 mm margin), dCreateConvex; meshes: btBvhTriangleMeshShape, ODE trimesh; compounds:"
	@echo "  btCompoundShape, offset geoms. Joints: Bullet p2p/hinge/fixed/slider/cone-twist, ODE"
	@echo "  ball/hinge/fixed/slider/DBall, cone = ball + Euler AMotor; peer springs explicit."
	@echo "  Details and remaining asymmetries: tools/bench/README.md"
	@engines="$(BENCH_PHYSICS) $(foreach n,$(BENCH_THREADS),$(BENCH_PHYSICS):--threads:$(n))"; \
	for b in $(BENCH_BULLET) $(BENCH_ODE); do \
	  if $(MAKE) --no-print-directory -s $$b; then engines="$$engines $$b"; \
	  else echo "  $$(basename $$b): could not be built (run 'make deps-bench'); left out"; fi; \
	done; \
	failed=""; \
	for sc in $(BENCH_SCENES); do \
	  for r in $$(seq $(BENCH_REPEATS)); do \
	    for b in $$engines; do \
	      $$(echo $$b | tr : ' ') $$sc --repeats 1 --quiet --csv $(BENCH_OUT)/bench-physics.csv || \
	        failed="$$failed $$(echo $$b | sed 's|.*/||')@$$(basename $$sc .scene)"; \
	    done; \
	  done; \
	done; \
	$(BENCH_REPORT) physics $(BENCH_OUT)/bench-physics.csv; \
	if [ -n "$$failed" ]; then echo "  bench-physics: FAILED runs:$$failed"; exit 1; fi

# 2. Fixed point: inline ops vs libfixmath calls.
bench-fx: $(BENCH_FX)
	@echo "== 2. fixed-point: inline ops vs libfixmath calls (ratio = libfixmath / ours)"
	@mkdir -p $(BENCH_OUT) && $(BENCH_FX) --csv $(BENCH_OUT)/bench-fx.csv

# 3. Snapshot save/restore of the settled pile vs memcpy of the same bytes, and
# the rollback frame (restore the disturbed pile + re-simulate 8 ticks) with 1
# worker and with each of BENCH_THREADS.
bench-snapshot: $(BENCH_SNAPSHOT)
	@echo "== 3. snapshot: save + restore of the settled 1000-box pile vs memcpy of the same bytes; rollback frame"
	@mkdir -p $(BENCH_OUT) && rm -f $(BENCH_OUT)/bench-snapshot.csv && $(BENCH_SNAPSHOT) tools/scenes/pile_1000.scene \
	  $(foreach n,$(BENCH_THREADS),--threads $(n)) --csv $(BENCH_OUT)/bench-snapshot.csv
	@echo "== 3b. rollback frame on the game scenes: the push arena and car soccer (restore + 8 re-simulated ticks)"
	@$(BENCH_SNAPSHOT) tools/scenes/arena.scene \
	  $(foreach n,$(BENCH_THREADS),--threads $(n)) --csv $(BENCH_OUT)/bench-snapshot.csv
	@$(BENCH_SNAPSHOT) tools/scenes/soccer.scene \
	  $(foreach n,$(BENCH_THREADS),--threads $(n)) --csv $(BENCH_OUT)/bench-snapshot.csv

# 7. Cloth: the scene's cloth in ours (1 worker and each BENCH_THREADS) and in
# Bullet's btSoftBody, repeats interleaved like section 1; the table shows
# ms/tick, ours / Bullet and the state each engine ended in (strain,
# penetration into the sphere, pin drift, lowest particle, last-tick speed).
bench-cloth: $(BENCH_CLOTH) $(BENCH_REPORT)
	@mkdir -p $(BENCH_OUT) && rm -f $(BENCH_OUT)/bench-cloth.csv
	@echo "== 7. cloth: ms/tick, median of $(BENCH_REPEATS) fresh runs (interleaved), $(BENCH_CLOTH_SCENE)"
	@echo "  same scene file in both engines: 64 x 64 particles, structural + shear + bend sticks,"
	@echo "  pinned at two corners, falling onto a static sphere; dt 1092/65536 s, gravity -9.81."
	@echo "  ours: Q16.16 Verlet, sqrt-free sticks, the cloth's iterations (8), projection collisions."
	@echo "  Bullet 3.24 btSoftBody (float): CreatePatch + our shear/bend sticks as links,"
	@echo "  piterations = our iterations, SDF rigid contacts, margin = particle radius. Differences:"
	@echo "  tools/bench/README.md (section 7)."
	@engines="$(BENCH_CLOTH) $(foreach n,$(BENCH_THREADS),$(BENCH_CLOTH):--threads:$(n))"; \
	if $(MAKE) --no-print-directory -s $(BENCH_CLOTH_BULLET); then engines="$$engines $(BENCH_CLOTH_BULLET)"; \
	else echo "  bench_cloth_bullet: could not be built (run 'make deps-bench'); left out"; fi; \
	failed=""; \
	for r in $$(seq $(BENCH_REPEATS)); do \
	  for b in $$engines; do \
	    $$(echo $$b | tr : ' ') $(BENCH_CLOTH_SCENE) --repeats 1 --quiet --csv $(BENCH_OUT)/bench-cloth.csv || \
	      failed="$$failed $$(echo $$b | sed 's|.*/||')"; \
	  done; \
	done; \
	$(BENCH_REPORT) cloth $(BENCH_OUT)/bench-cloth.csv; \
	if [ -n "$$failed" ]; then echo "  bench-cloth: FAILED runs:$$failed"; exit 1; fi

# 8. Vehicles: ours (1 worker) and Bullet's btRaycastVehicle, repeats
# interleaved; the table shows the minimum over runs (the machine is shared),
# ours / Bullet, and where car 0 went in each engine (same motion scale).
# Then ls_game_tick on BENCH_VEHICLE_GAME_SCENE (left out when missing).
bench-vehicle: $(BENCH_VEHICLE)
	@mkdir -p $(BENCH_OUT) && rm -f $(BENCH_OUT)/bench-vehicle.csv
	@echo "== 8. vehicle: ms/tick, minimum of $(BENCH_REPEATS) fresh runs (interleaved), 4 cars x 4 ray wheels"
	@echo "  same scene in both engines: 2048-triangle terrain with two 0.75 m ramps, 800 kg box chassis,"
	@echo "  k 20000 N/m, c 2000 N s/m, rest 0.3125 m, travel 0.1875 m, radius 0.375 m, mu 1, AWD 1600 N,"
	@echo "  front steer 0.5 rad; one scripted control schedule, 1200 ticks of 1092/65536 s."
	@echo "  ours: Q16.16 ls_vehicle + ls_world_step, 1 worker, 8 sub-steps x (solve + relax)."
	@echo "  Bullet 3.24 btRaycastVehicle (float), btBvhTriangleMeshShape, 1 step/tick, 16 iterations."
	@echo "  game row: ls_game_tick on $(BENCH_VEHICLE_GAME_SCENE), 1 worker, the game's bots (untimed)."
	@echo "  Differences: tools/bench/README.md (section 8)."
	@engines="$(BENCH_VEHICLE)"; \
	if $(MAKE) --no-print-directory -s $(BENCH_VEHICLE_BULLET); then engines="$$engines $(BENCH_VEHICLE_BULLET)"; \
	else echo "  bench_vehicle_bullet: could not be built (run 'make deps-bench'); left out"; fi; \
	failed=""; \
	for r in $$(seq $(BENCH_REPEATS)); do \
	  for b in $$engines; do \
	    $$b --repeats 1 --quiet --csv $(BENCH_OUT)/bench-vehicle.csv || failed="$$failed $$(basename $$b)"; \
	  done; \
	done; \
	if [ -f $(BENCH_VEHICLE_GAME_SCENE) ]; then \
	  $(MAKE) --no-print-directory -s $(BENCH_VEHICLE_GAME) && \
	  $(BENCH_VEHICLE_GAME) $(BENCH_VEHICLE_GAME_SCENE) --repeats $(BENCH_REPEATS) --quiet \
	    --csv $(BENCH_OUT)/bench-vehicle.csv || failed="$$failed bench_vehicle_game"; \
	else echo "  $(BENCH_VEHICLE_GAME_SCENE): not in this tree; game row left out"; fi; \
	$(BENCH_VEHICLE) --report $(BENCH_OUT)/bench-vehicle.csv; \
	if [ -n "$$failed" ]; then echo "  bench-vehicle: FAILED runs:$$failed"; exit 1; fi

# 9. Box3D: its own benchmark scenes (shared/benchmarks.c: large_pyramid,
# many_pyramids, joint_grid, convex_pile, rain) in ours (4 sub-steps with 1
# and 2 workers, our default sub-steps with 1) and in Box3D (1 and 2
# workers), repeats interleaved like section 1; then the 2D pyramids of 20
# and 40 layers (quality rows, one run each), the rollback capacity search in
# both engines and the tables (`bench_box3d_ours --report`). Skipped, with a
# message, when BOX3D_DIR does not exist.
bench-box3d:
	@mkdir -p $(BENCH_OUT) && rm -f $(BENCH_OUT)/bench-box3d.csv
	@echo "== 9. box3d: ms/step on Box3D's own benchmark scenes, median of $(BENCH_BOX3D_REPEATS) fresh runs (interleaved)"
	@if [ ! -f "$(BOX3D_DIR)/include/box3d/box3d.h" ]; then \
	  echo "  Box3D not found at BOX3D_DIR=$(BOX3D_DIR): section left out (set BOX3D_DIR to a Box3D tree)"; exit 0; fi; \
	echo "  Box3D $$(tr '\n' ' ' < $(BOX3D_DIR)/README.md | sed -n 's/.*as of commit \([0-9a-f]*\).*/\1/p') (float, SSE2, CMake Release) from $(BOX3D_DIR); its scenes from its Create functions,"; \
	echo "  checked against the description ours is built from (same bodies, sizes, densities, positions, joints, steps)."; \
	echo "  Both: 60 Hz (ours dt 1092/65536 s), gravity -10, 4 sub-steps x (solve + relax), contacts 30 Hz, ratio 10,"; \
	echo "  push-out <= 3 m/s, joints 60 Hz ratio 2, friction 0.6, no restitution. Box3D's driver: step 0 untimed,"; \
	echo "  ms/step = wall time of steps 1..N-1 / (N-1). ours_default: our default 8 sub-steps; _2w: 2 workers."; \
	echo "  ours: ground = plane y <= 0 (Box3D: a 1 m thick box), convex_pile at 1/32 of the density, rain's"; \
	echo "  spherical joints = our cone joints (their joint friction; no spring). All differences: tools/bench/README.md (section 9)"; \
	$(MAKE) --no-print-directory -s $(BENCH_BOX3D_OURS) $(BENCH_BOX3D_PEER) || { echo "  bench-box3d: could not build the binaries"; exit 1; }; \
	csv=$(BENCH_OUT)/bench-box3d.csv; failed=""; \
	engines="$(BENCH_BOX3D_OURS):--threads:1 $(BENCH_BOX3D_OURS):--threads:2 $(BENCH_BOX3D_OURS):--substeps:default \
	         $(BENCH_BOX3D_PEER):--threads:1 $(BENCH_BOX3D_PEER):--threads:2"; \
	for r in $$(seq $(BENCH_BOX3D_REPEATS)); do \
	  for sc in $(BENCH_BOX3D_SCENES); do \
	    for b in $$engines; do \
	      $$(echo $$b | tr : ' ') --scene $$sc --csv $$csv || failed="$$failed $$(echo $$b | sed 's|.*/||')@$$sc"; \
	    done; \
	  done; \
	done; \
	for sc in $(BENCH_BOX3D_QUALITY); do \
	  for b in $(BENCH_BOX3D_OURS):--threads:1 $(BENCH_BOX3D_OURS):--substeps:default $(BENCH_BOX3D_PEER):--threads:1; do \
	    $$(echo $$b | tr : ' ') --scene $$sc --csv $$csv || failed="$$failed $$(echo $$b | sed 's|.*/||')@$$sc"; \
	  done; \
	done; \
	for b in $(BENCH_BOX3D_OURS) $(BENCH_BOX3D_OURS):--substeps:default $(BENCH_BOX3D_PEER); do \
	  $$(echo $$b | tr : ' ') --rollback --csv $$csv || failed="$$failed $$(echo $$b | sed 's|.*/||')@rollback"; \
	done; \
	$(BENCH_BOX3D_OURS) --report $$csv; \
	echo "  stages, ms/step (mean over the timed steps of one run; ours: ls_world_profile, Box3D: b3World_GetProfile;"; \
	echo "  ours' stages add up to its step, Box3D's solve holds prepare..store, the rest are its other stages):"; \
	for sc in $(BENCH_BOX3D_PROFILE_SCENES); do \
	  for b in ours:$(BENCH_BOX3D_OURS):1 ours_2w:$(BENCH_BOX3D_OURS):2 box3d:$(BENCH_BOX3D_PEER):1 box3d_2w:$(BENCH_BOX3D_PEER):2; do \
	    set -- $$(echo $$b | tr : ' '); \
	    p=$$(BENCH_BOX3D_PROFILE=1 $$2 --scene $$sc --threads $$3 --quiet 2>&1 | sed -n 's/^profile (ms\/step over [0-9]* steps)://p'); \
	    if [ -n "$$p" ]; then echo "  $$sc $$1:$$p" | fold -s -w 110 | sed '2,$$s/^/      /'; \
	    else failed="$$failed $$1@$$sc-profile"; fi; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "  bench-box3d: FAILED runs:$$failed"; exit 1; fi

# Machine description + every section's rows -> latest.csv; the ratio charts -> SVG.
bench-report: $(BENCH_REPORT)
	@mkdir -p $(BENCH_OUT) $(BENCH_RESULTS)
	@{ m() { printf 'machine,%s,,%s,%s,text\n' "$$1" "$$2" "$$(printf '%s' "$$3" | tr ',\n' ';;')"; }; \
	  m host cpu "$$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"; \
	  m host cores "$$(nproc)"; \
	  m host kernel "$$(uname -sr)"; \
	  m host os "$$(. /etc/os-release 2>/dev/null; echo $$PRETTY_NAME)"; \
	  m host date_utc "$$(date -u +%Y-%m-%dT%H:%M:%SZ)"; \
	  m host loadavg "$$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  m build cc "$$($(CC) --version | head -1)"; \
	  m build cxx "$$($(CXX) --version | head -1)"; \
	  m build cflags "$(CFLAGS) (physics library: $(PHYS_OPT))"; \
	  m build commit "$$(git rev-parse --short HEAD 2>/dev/null)$$(git diff --quiet HEAD -- fixmath_phys 2>/dev/null || echo ' + uncommitted fixmath_phys changes')"; \
	  for p in libbullet-dev libode-dev libfixmath-dev; do \
	    m package $$p "$$(dpkg-query -W -f='$${Version}\n' $$p 2>/dev/null | head -1 | grep . || echo not installed)"; done; \
	  m package box3d "$$(tr '\n' ' ' < $(BOX3D_DIR)/README.md 2>/dev/null | sed -n 's/.*as of commit \([0-9a-f]*\).*/\1/p' | grep . || echo not found)"; \
	} > $(BENCH_OUT)/machine.csv
	@files="$(BENCH_OUT)/machine.csv"; \
	for s in $(BENCH_SECTIONS); do [ -f $(BENCH_OUT)/$$s.csv ] && files="$$files $(BENCH_OUT)/$$s.csv"; done; \
	$(BENCH_REPORT) merge $(BENCH_RESULTS)/latest.csv $$files
	@$(MAKE) --no-print-directory bench-charts

# The ratio charts from latest.csv alone (no bench run): physics_ratios.svg
# (section 1: ours / Bullet and ours / ODE, 1 and 2 workers) and
# box3d_ratios.svg (section 9: ours / Box3D, 1 and 2 workers each), committed
# beside it. `make bench` redraws them after every run, so they are never stale.
bench-charts: $(BENCH_REPORT)
	$(BENCH_REPORT) charts $(BENCH_RESULTS)/latest.csv $(BENCH_RESULTS)

$(BENCH_FX): $(BENCH_OBJ)/bench_fx.o $(BENCH_CLOCK) $(BENCH_PHYS_OBJ)
	$(CC) $(ALLFLAGS) -o $@ $^ -llibfixmath -lm

$(BENCH_PHYSICS): $(BENCH_OBJ)/engine_ours.o $(BENCH_COMMON) $(BENCH_PHYS_OBJ)
	$(CC) $(ALLFLAGS) -o $@ $^ -lm

$(BENCH_ODE): $(BENCH_OBJ)/engine_ode.o $(BENCH_COMMON) $(BENCH_PHYS_OBJ)
	$(CC) $(ALLFLAGS) -o $@ $^ -lode -lm

$(BENCH_BULLET): $(BENCH_OBJ)/engine_bullet.o $(BENCH_COMMON) $(BENCH_PHYS_OBJ)
	$(CXX) $(BENCH_CXXFLAGS) -o $@ $^ $(BULLET_LIBS) -lm

$(BENCH_SNAPSHOT): $(BENCH_OBJ)/bench_snapshot.o $(BENCH_COMMON) $(BENCH_PHYS_OBJ)
	$(CC) $(ALLFLAGS) -o $@ $^ -lm

$(BENCH_CLOTH): $(BENCH_OBJ)/cloth_ours.o $(BENCH_OBJ)/cloth_common.o $(BENCH_COMMON) $(BENCH_PHYS_OBJ)
	$(CC) $(ALLFLAGS) -o $@ $^ -lm

$(BENCH_CLOTH_BULLET): $(BENCH_OBJ)/cloth_bullet.o $(BENCH_OBJ)/cloth_common.o $(BENCH_COMMON) $(BENCH_PHYS_OBJ)
	$(CXX) $(BENCH_CXXFLAGS) -o $@ $^ $(BULLET_SOFT_LIBS) -lm

$(BENCH_VEHICLE): $(BENCH_OBJ)/vehicle_ours.o $(BENCH_OBJ)/vehicle_common.o $(BENCH_CLOCK) $(BENCH_PHYS_OBJ)
	$(CC) $(ALLFLAGS) -o $@ $^ -lm

$(BENCH_VEHICLE_BULLET): $(BENCH_OBJ)/vehicle_bullet.o $(BENCH_OBJ)/vehicle_common.o $(BENCH_CLOCK)
	$(CXX) $(BENCH_CXXFLAGS) -o $@ $^ $(BULLET_LIBS) -lm

$(BENCH_VEHICLE_GAME): $(BENCH_OBJ)/vehicle_game.o $(BENCH_OBJ)/vehicle_common.o $(BENCH_CLOCK) $(BENCH_PHYS_OBJ)
	$(CC) $(ALLFLAGS) -o $@ $^ -lm

# Box3D, built by its own CMake (Release, default SSE2, its benchmark driver and
# shared scenes on) into $(BUILD)/box3d; linked only into bench_box3d_*.
BOX3D_BUILD  = $(BUILD)/box3d
BOX3D_LIB    = $(BOX3D_BUILD)/src/libbox3d.a
BOX3D_SHARED = $(BOX3D_BUILD)/shared/libshared.a
BOX3D_CFLAGS = -isystem $(BOX3D_DIR)/include -isystem $(BOX3D_DIR)/shared
box3d-lib:
	@if [ ! -f "$(BOX3D_DIR)/CMakeLists.txt" ]; then \
	  echo "box3d: no Box3D tree at BOX3D_DIR=$(BOX3D_DIR); left out (section 9 of make bench will say so)"; exit 0; fi; \
	mkdir -p $(BOX3D_BUILD); \
	echo "box3d: building $(BOX3D_DIR) into $(BOX3D_BUILD) (log: $(BOX3D_BUILD)/build.log)"; \
	{ cmake -S $(BOX3D_DIR) -B $(BOX3D_BUILD) -DCMAKE_BUILD_TYPE=Release -DBOX3D_SAMPLES=OFF \
	    -DBOX3D_UNIT_TESTS=OFF -DBOX3D_BENCHMARKS=ON -DBOX3D_VALIDATE=OFF && \
	  cmake --build $(BOX3D_BUILD) -j2; } > $(BOX3D_BUILD)/build.log 2>&1 || \
	  { tail -20 $(BOX3D_BUILD)/build.log; echo "box3d: build failed"; exit 1; }
$(BOX3D_LIB):
	@$(MAKE) --no-print-directory box3d-lib
	@test -f $@ || { echo "box3d: $@ is missing (BOX3D_DIR=$(BOX3D_DIR))"; exit 1; }
$(BOX3D_SHARED): $(BOX3D_LIB)
	@test -f $@ || { echo "box3d: $@ is missing"; exit 1; }
$(BENCH_OBJ)/box3d_peer.o $(BENCH_OBJ)/box3d_human.o: CPPFLAGS += $(BOX3D_CFLAGS)

# Ours links Box3D only to read the rain scene's humans and meshes from
# Box3D's code before the world is built (box3d_human.c); never while timing.
$(BENCH_BOX3D_OURS): $(BENCH_OBJ)/box3d_ours.o $(BENCH_OBJ)/box3d_common.o $(BENCH_OBJ)/box3d_human.o \
                     $(BENCH_CLOCK) $(BENCH_PHYS_OBJ) $(BOX3D_SHARED) $(BOX3D_LIB)
	$(CC) $(ALLFLAGS) -o $@ $(filter %.o,$^) $(BOX3D_SHARED) $(BOX3D_LIB) -lm

# The Box3D side links no object of ours.
$(BENCH_BOX3D_PEER): $(BENCH_OBJ)/box3d_peer.o $(BENCH_OBJ)/box3d_common.o $(BENCH_CLOCK) \
                     $(BOX3D_SHARED) $(BOX3D_LIB)
	$(CC) $(ALLFLAGS) -o $@ $(filter %.o,$^) $(BOX3D_SHARED) $(BOX3D_LIB) -lm

$(BENCH_REPORT): $(BENCH_OBJ)/bench_report.o $(BENCH_CLOCK)
	$(CC) $(ALLFLAGS) -o $@ $^ -lm

$(BENCH_OBJ)/%.o: tools/bench/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(BENCH_CXXFLAGS) $(INCLUDES) $(BULLET_CFLAGS) -c $< -o $@
