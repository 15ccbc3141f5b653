# Releases (SPEC.md §19.5 "Releases"; tools/release/release.sh). CHANGELOG.md's
# sections are the record: `make release VERSION=X.Y.Z` cuts one (the
# Unreleased section becomes "## X.Y.Z — today", ls/base.h says X.Y.Z),
# `make tags` sets each release's missing tag vX.Y.Z, and `make test` checks
# that the sections, base.h, SPEC's engines table, the release commits and
# their tags agree (test-releases, part of test-library).
.PHONY: release tags test-releases
release:
	@test -n "$(VERSION)" || { echo "make release VERSION=X.Y.Z"; exit 2; }
	tools/release/release.sh cut $(VERSION)

tags:
	tools/release/release.sh tags

test-library: test-releases
test-releases:
	bash tests/library/releases.sh
