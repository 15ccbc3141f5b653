#!/usr/bin/env bash
# Releases (SPEC.md §19.5 "Releases"): CHANGELOG.md's release sections agree
# with ls/base.h, SPEC's engines table and (in a clone with history) each
# release's commit and tag; and the check refuses what it must, by line.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=tools/release/release.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0
"$R" check
pass=$((pass + 1))

# Each bad CHANGELOG is refused with its message.
refuses() { # NAME EXPECTED-SUBSTRING  (CHANGELOG text on stdin)
	cat > "$tmp/$1.md"
	if out=$(RELEASE_CHANGELOG="$tmp/$1.md" "$R" check 2>&1); then
		echo "FAIL $1: accepted"; echo "$out"; exit 1
	fi
	case "$out" in *"$2"*) pass=$((pass + 1)) ;; *) echo "FAIL $1: expected '$2' in:"; echo "$out"; exit 1 ;; esac
}
refuses no_unreleased "the first section must be '## Unreleased'" <<'MD'
## 0.3.0 — 2026-12-02
MD
refuses bad_heading "not '## 0.3 — 2026-12-02'" <<'MD'
## Unreleased
## 0.3 — 2026-12-02
MD
refuses order "0.3.0 is not older than 0.2.0 above it" <<'MD'
## Unreleased
## 0.2.0 — 2026-11-27 (commit 03ffe20)
## 0.3.0 — 2026-12-02
MD
refuses dates "0.2.0's date 2026-12-03 is after 0.3.0's 2026-12-02" <<'MD'
## Unreleased
## 0.3.0 — 2026-12-02
## 0.2.0 — 2026-12-03 (commit 03ffe20)
MD
refuses no_engine "release 0.9.0 has no row '| 0.9 |'" <<'MD'
## Unreleased
## 0.9.0 — 2026-12-02
MD
refuses newer_than_base "older than the newest release 0.9.0" <<'MD'
## Unreleased
## 0.9.0 — 2026-12-02
MD
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ "$(git rev-parse --is-shallow-repository)" = false ]; then
	# The Foundation commit says 0.1.0, so it cannot be 0.2.0's.
	refuses wrong_commit "says version '0.1.0' in ls/base.h" <<MD
## Unreleased
## 0.3.0 — 2026-12-02
## 0.2.0 — 2026-11-27 (commit $(git rev-list --max-parents=0 HEAD | cut -c1-7))
MD
fi
# `cut` refuses a version that is not newer, and an empty Unreleased.
cp CHANGELOG.md "$tmp/cut.md"
if RELEASE_CHANGELOG="$tmp/cut.md" "$R" cut 0.2.9 >/dev/null 2>&1; then echo "FAIL cut accepted an older version"; exit 1; fi
pass=$((pass + 1))
echo "releases: $pass passed, 0 failed"
