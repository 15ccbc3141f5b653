#!/usr/bin/env bash
# Releases (SPEC.md §19.5 "Releases"): CHANGELOG.md's sections are the record,
# git tags follow from them.
#
#   release.sh check        CHANGELOG's sections are well formed and agree with
#                           ls/base.h, SPEC's engines table and, in a git clone
#                           with history, each release's commit and tag
#   release.sh tags         create the missing annotated tags vX.Y.Z (never
#                           moves one that exists)
#   release.sh cut X.Y.Z    turn "## Unreleased" into "## X.Y.Z — today", open a
#                           new empty Unreleased, set ls/base.h's version
#
# Why the file and not the tags: a clone of the branch alone (an archive, a
# CI checkout) has no tags, and the tag of a release made before its tag
# existed must be recoverable. A release's commit is the one its heading
# names ("commit abc1234", for releases tagged afterwards) or else the first
# commit whose CHANGELOG.md holds its heading line.
set -euo pipefail
cd "$(dirname "$0")/../.."

CHANGELOG=${RELEASE_CHANGELOG:-CHANGELOG.md}
BASE_H=core/include/ls/base.h
# Where base.h lived before the core/ folder (0.1, 0.2 and most of 0.3).
OLD_BASE_H=fixmath_phys/include/ls/base.h
HEADING_RE='^## ([0-9]+)\.([0-9]+)\.([0-9]+) — ([0-9]{4}-[0-9]{2}-[0-9]{2})( .*)?$'

fail=0
err() { echo "release: $*" >&2; fail=1; }
usage() { sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//'; }

# The version a base.h text states, as "M.N.P".
version_of() {
	awk '/^#define LS_VERSION_MAJOR /{a=$3} /^#define LS_VERSION_MINOR /{b=$3}
	     /^#define LS_VERSION_PATCH /{c=$3} END{if (a != "" && b != "" && c != "") print a "." b "." c}'
}

# "M N P" compared: prints -1, 0 or 1.
cmp_versions() {
	local IFS=.; local -a x=($1) y=($2); local i
	for i in 0 1 2; do
		if ((x[i] < y[i])); then echo -1; return; fi
		if ((x[i] > y[i])); then echo 1; return; fi
	done
	echo 0
}

# Lines "VERSION DATE LINE COMMIT-OR-EMPTY" for every released heading, in file order.
releases() {
	local n=0 line
	while IFS= read -r line; do
		n=$((n + 1))
		if [[ $line =~ $HEADING_RE ]]; then
			local v="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.${BASH_REMATCH[3]}" d="${BASH_REMATCH[4]}"
			local rest="${BASH_REMATCH[5]}" commit=""
			if [[ $rest =~ commit\ ([0-9a-f]{7,40}) ]]; then commit="${BASH_REMATCH[1]}"; fi
			echo "$v $d $n $commit"
		fi
	done < "$CHANGELOG"
}

have_history() {
	git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
		[ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = false ]
}

# The commit of release VERSION (its heading at LINE names it, or added it).
release_commit() {
	local version=$1 line=$2 named=$3 heading
	if [ -n "$named" ]; then git rev-parse -q --verify "$named^{commit}" || true; return; fi
	heading=$(sed -n "${line}p" "$CHANGELOG" | cut -d' ' -f1-4)
	git log --reverse --format=%H -F -S"$heading" -- CHANGELOG.md | sed -n 1p
}

check() {
	local first top="" here prev_v="" prev_d="" v d line named count=0
	first=$(grep -m1 '^## ' "$CHANGELOG" || true)
	[ "$first" = "## Unreleased" ] || err "$CHANGELOG: the first section must be '## Unreleased' (found '${first:-nothing}')"
	while IFS= read -r bad; do
		err "$CHANGELOG line ${bad%%:*}: a section heading is '## Unreleased' or '## X.Y.Z — YYYY-MM-DD', not '${bad#*:}'"
	done < <(grep -n '^## ' "$CHANGELOG" | grep -v -E "^[0-9]+:## Unreleased\$" | grep -v -E "^[0-9]+:${HEADING_RE#^}" || true)
	[ "$(grep -c '^## Unreleased$' "$CHANGELOG")" -le 1 ] || err "$CHANGELOG: more than one '## Unreleased'"
	here=$(version_of < "$BASE_H")
	[ -n "$here" ] || err "$BASE_H: no LS_VERSION_MAJOR/MINOR/PATCH"
	while read -r v d line named; do
		count=$((count + 1))
		if [ -n "$prev_v" ]; then
			[ "$(cmp_versions "$v" "$prev_v")" = -1 ] || err "$CHANGELOG line $line: $v is not older than $prev_v above it (newest first)"
			[[ ! $d > $prev_d ]] || err "$CHANGELOG line $line: $v's date $d is after $prev_v's $prev_d"
		else
			top=$v
		fi
		grep -q -E "^\| ${v%.*} \| " SPEC.md || err "$CHANGELOG line $line: release $v has no row '| ${v%.*} |' in SPEC.md §16.8's engines table"
		prev_v=$v; prev_d=$d
	done < <(releases)
	[ "$count" -gt 0 ] || err "$CHANGELOG: no released section"
	if [ -n "${top:-}" ] && [ -n "$here" ] && [ "$(cmp_versions "$here" "$top")" = -1 ]; then
		err "$BASE_H says $here, older than the newest release $top"
	fi
	if ! have_history; then
		echo "releases: $count in $CHANGELOG, newest ${top:-none}, base.h $here (no git history here: commits and tags not checked)"
		return
	fi
	local tagged=0 untagged=""
	while read -r v d line named; do
		local c stated tag
		c=$(release_commit "$v" "$line" "$named")
		if [ -z "$c" ]; then
			if [ -n "$named" ]; then err "$CHANGELOG line $line: $v names commit $named, which is not in this clone"; continue; fi
			# The heading is in the working tree only: the release commit is being made.
			echo "releases: $v is not committed yet (its heading is in the working tree only)"; continue
		fi
		stated=$( (git show "$c:$BASE_H" 2>/dev/null || git show "$c:$OLD_BASE_H" 2>/dev/null || true) | version_of)
		[ "$stated" = "$v" ] || err "$CHANGELOG line $line: $v's commit ${c:0:7} says version '${stated:-none}' in ls/base.h"
		tag=$(git rev-parse -q --verify "refs/tags/v$v^{commit}" || true)
		if [ -z "$tag" ]; then
			untagged="$untagged v$v"
		elif [ "$tag" != "$c" ]; then
			err "tag v$v is on ${tag:0:7}, but $CHANGELOG line $line says ${c:0:7}"
		else
			tagged=$((tagged + 1))
		fi
	done < <(releases)
	echo "releases: $count in $CHANGELOG, newest ${top:-none}, base.h $here; $tagged tagged${untagged:+; not tagged in this clone:$untagged (make tags)}"
}

tags() {
	have_history || { echo "release: tags need a git clone with its history" >&2; exit 1; }
	local v d line named c tag made=0
	while read -r v d line named; do
		c=$(release_commit "$v" "$line" "$named")
		[ -n "$c" ] || { err "$v: no commit holds its heading yet (commit the release first)"; continue; }
		tag=$(git rev-parse -q --verify "refs/tags/v$v^{commit}" || true)
		if [ -z "$tag" ]; then
			git tag -a "v$v" -m "lockstep $v ($d)" "$c"
			echo "tagged v$v at $(git rev-parse --short "$c")"
			made=$((made + 1))
		elif [ "$tag" != "$c" ]; then
			err "tag v$v is on ${tag:0:7}, $CHANGELOG says ${c:0:7}: not moved"
		fi
	done < <(releases)
	echo "tags: $made made"
}

cut_release() {
	local v=${1:-} today
	[[ $v =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || { echo "release: cut needs a version X.Y.Z (got '${v}')" >&2; exit 2; }
	local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]} patch=${BASH_REMATCH[3]}
	local top
	top=$(releases | sed -n 1p | cut -d' ' -f1)
	if [ -n "$top" ] && [ "$(cmp_versions "$v" "$top")" != 1 ]; then
		echo "release: $v is not newer than the last release $top" >&2; exit 1
	fi
	grep -q '^## Unreleased$' "$CHANGELOG" || { echo "release: $CHANGELOG has no '## Unreleased'" >&2; exit 1; }
	if awk '/^## Unreleased$/{u=1; next} /^## /{u=0} u && /^- /{n++} END{exit n > 0}' "$CHANGELOG"; then
		echo "release: '## Unreleased' lists no change: nothing to release" >&2; exit 1
	fi
	today=${RELEASE_DATE:-$(date -u +%F)}
	awk -v v="$v" -v d="$today" '
		/^## Unreleased$/ { print; print ""; print "Nothing yet."; print ""; print "## " v " — " d; skip = 1; next }
		skip && /^Nothing yet\.$/ { next }
		{ print }' "$CHANGELOG" > "$CHANGELOG.tmp" && mv "$CHANGELOG.tmp" "$CHANGELOG"
	sed -i -e "s/^#define LS_VERSION_MAJOR .*/#define LS_VERSION_MAJOR $major/" \
	       -e "s/^#define LS_VERSION_MINOR .*/#define LS_VERSION_MINOR $minor/" \
	       -e "s/^#define LS_VERSION_PATCH .*/#define LS_VERSION_PATCH $patch/" "$BASE_H"
	echo "cut $v ($today): $CHANGELOG and $BASE_H changed; a new minor needs its row in SPEC.md §16.8's engines table."
	echo "Then: make test, git commit -am 'lockstep $v', make tags, make deb (at the tag)."
}

case "${1:-}" in
	check) check ;;
	tags) tags ;;
	cut) cut_release "${2:-}" ;;
	-h|--help|help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
esac
[ "$fail" = 0 ] || exit 1
