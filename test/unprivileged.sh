#!/usr/bin/env bash
# `make test-unprivileged`: go test ./lib/... ./hooks/... ./nri-adapter/... as a user without
# privileges, as a contributor without root runs them. Every package must pass: its decision
# and read-side tests run, and what needs root (the FUSE simulator, making cgroups, giving a
# file to another user) skips saying why. The run fails when a test fails or skips without a
# reason, and lists each reason given, with how many tests gave it.
#
# Run as root (as make test and CI are), it runs the tests as UNPRIV_USER (default nobody) on a
# copy of the tree that user can read, its modules vendored into the copy (root's module cache
# is under /root, which that user cannot read, and the run must not reach the network), with
# a build cache of that user's own under RESCTRLMON_TEST_CACHE, kept between runs. Run as
# anyone else, it runs go test as that user in place.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
pkgs=(./lib/... ./hooks/... ./nri-adapter/...)
user=${UNPRIV_USER:-nobody}
work=$(mktemp -d /tmp/resctrl-mon-unpriv-XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
json=$work/go-test.json

if [ "$(id -u)" = 0 ]; then
	src=$work/src
	mkdir "$src"
	# The working tree as it is, uncommitted files included, without what git ignores (bin/,
	# say); a tree that is no git checkout is copied whole.
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
			if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi # not a file deleted since
		done | xargs -0 cp -P --parents -t "$src"
	else
		cp -a . "$src"
	fi
	(cd "$src" && "$GO" mod vendor)
	cache=${RESCTRLMON_TEST_CACHE:-/var/cache/resctrl-mon-test}/unprivileged-gocache
	mkdir -p "$cache" "$work/home"
	chown -R "$user" "$src" "$cache" "$work/home"
	goroot=$("$GO" env GOROOT)
	set +e
	(cd "$src" && runuser -u "$user" -- env -i PATH="$goroot/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		HOME="$work/home" TMPDIR=/tmp GOCACHE="$cache" GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local \
		go test -count=1 -json "${pkgs[@]}") >"$json"
	rc=$?
	set -e
else
	set +e
	env -u RESCTRLSIM_REQUIRE "$GO" test -count=1 -json "${pkgs[@]}" >"$json"
	rc=$?
	set -e
fi

# go test -json: each test's output lines ("    x_test.go:12: why"), then its "skip" or
# "fail". A skip's reason is the last such line before it that is not a log line of the code
# under test (slog's "time=... level=..."), which a cleanup may write after the skip; the
# numbers a reason names a temporary path by are dropped, so equal reasons count together.
awk '
	function field(line, name,    s) {
		s = line
		if (!sub(".*\"" name "\":\"", "", s)) return ""
		sub("\",\".*|\"}$", "", s)
		return s
	}
	/"Action":"output"/ && /"Test":/ {
		out = field($0, "Output")
		if (out ~ /^ +[A-Za-z0-9_]+\.go:[0-9]+: / && out !~ /\.go:[0-9]+: time=[^ ]+ level=/) {
			sub(/^ +[A-Za-z0-9_]+\.go:[0-9]+: /, "", out)
			sub(/\\n$/, "", out)
			gsub(/-[0-9]+-[0-9]+:/, "-N-N:", out)
			last[field($0, "Package") " " field($0, "Test")] = out
		}
	}
	/"Action":"(skip|fail)"/ && /"Test":/ {
		pkg = field($0, "Package"); sub(".*/resctrl-mon/resctrl-mon/", "", pkg)
		key = field($0, "Package") " " field($0, "Test")
		if ($0 ~ /"Action":"fail"/) { print "FAIL " pkg " " field($0, "Test"); failed++; next }
		why = last[key]
		if (why == "") { print "SKIP without a reason: " pkg " " field($0, "Test"); bare++ }
		else { reasons[pkg ": " why]++ }
		skipped++
	}
	/"Action":"pass"/ && /"Test":/ { passed++ }
	END {
		for (r in reasons) printf "  %3d skipped: %s\n", reasons[r], r | "sort -k3"
		close("sort -k3")
		printf "unprivileged go test: %d passed, %d skipped, %d failed\n", passed, skipped, failed
		exit (failed > 0 || bare > 0)
	}
' "$json" || rc=1
if [ "$rc" != 0 ]; then
	# What go test said besides the tests (a build failure, a panic outside a test).
	grep -v '"Test":' "$json" | grep '"Action":"output"' | sed 's/.*"Output":"//; s/"}$//; s/\\n$//; s/\\t/\t/g' | grep -v '^ok\|^PASS\|no test files' || true
	echo "make test-unprivileged: FAILED" >&2
	exit 1
fi
