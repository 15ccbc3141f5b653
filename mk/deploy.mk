# deploy/: `lockstep relay` as an Agones game server (issue 30): a Dockerfile
# (a bookworm builder running CI's `make deps` and `make`, a bookworm-slim
# runtime with the relay's shared libraries) and the Fleet and GameServer
# manifests. No container runtime or cluster exists where this is built, so
# `make test-deploy` (part of `make test`) reads them instead:
# tests/deploy/check_deploy.py checks the Agones schema fields, the relay's
# arguments against its --help, the Dockerfile's build steps against .ci/run
# and its runtime packages against build/lockstep's NEEDED libraries. It parses
# YAML with PyYAML: python3-yaml.
DEPS_PKGS += python3-yaml

.PHONY: test-deploy
test-deploy: $(TOOL)
	python3 tests/deploy/check_deploy.py $(TOOL)
test: test-deploy
