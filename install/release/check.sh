#!/usr/bin/env bash
# What makes a version a release (`make release`, before and after it builds):
#   check.sh check <version> <top>   refuse a version that is not one (below)
#   check.sh tag <version> <top>     tag the commit it was built from, v<version>
# A final version (1.2.3) is released once, from one commit, with its notes: CHANGELOG.md has
# its section "## [1.2.3]" and nothing under [Unreleased] (what would ship unlisted), the tree
# has no uncommitted change, and a tag v1.2.3 that exists names this commit (else 1.2.3 was
# released from another one, and this build would be a different 1.2.3 under its name). After
# the build the commit is tagged. A pre-release (1.2.3-rc.1, a test's 1.2.3-test.1) is neither
# checked nor tagged: it promises nothing.
set -euo pipefail
mode=$1 version=$2 top=$3
[[ $version == *-* ]] && exit 0
git=(git -C "$top")

case $mode in
check)
	changelog=$top/CHANGELOG.md
	grep -qxF "## [$version]" "$changelog" 2>/dev/null || {
		echo "make release: $changelog has no section '## [$version]': move the [Unreleased] entries under it (or set VERSION to the next version)" >&2
		exit 1
	}
	unreleased=$(awk '/^## \[Unreleased\]/{on=1; next} /^## \[/{on=0} on && /^[-*] /{n++} END{print n+0}' "$changelog")
	if [ "$unreleased" != 0 ]; then
		echo "make release: $changelog lists $unreleased entries under [Unreleased]: a release of $version would ship them unlisted; move them under the next version's section and set VERSION to it" >&2
		exit 1
	fi
	"${git[@]}" rev-parse --git-dir >/dev/null 2>&1 || {
		echo "make release: $top is not a git checkout: a release is built from a commit, and tagged" >&2
		exit 1
	}
	if [ -n "$("${git[@]}" status --porcelain --untracked-files=no)" ]; then
		echo "make release: uncommitted changes in $top: a release is built from a commit; commit them, or build a pre-release (VERSION=$version-rc.1)" >&2
		exit 1
	fi
	head=$("${git[@]}" rev-parse HEAD)
	if tagged=$("${git[@]}" rev-parse -q --verify "refs/tags/v$version^{commit}"); then
		[ "$tagged" = "$head" ] || {
			echo "make release: tag v$version names commit $tagged, this is $head: $version was released from another commit; set VERSION to the next version" >&2
			exit 1
		}
	fi
	;;
tag)
	"${git[@]}" rev-parse -q --verify "refs/tags/v$version" >/dev/null ||
		"${git[@]}" tag -a "v$version" -m "resctrl-mon $version"
	echo "tag: v$version ($("${git[@]}" rev-parse --short "v$version^{commit}"))"
	;;
*)
	echo "check.sh: mode '$mode': want check or tag" >&2
	exit 2
	;;
esac
