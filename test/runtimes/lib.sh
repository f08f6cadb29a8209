# Shared by the build scripts in this directory; sourced, not run.
#
# Each script builds one runtime from the Go module proxy into
#   $RESCTRLMON_TEST_CACHE/<name>-<version>/bin   (default /var/cache/resctrl-mon-test)
# and prints that bin directory on stdout (build logs go to stderr). A directory that exists
# is complete: the build happens in a temporary directory beside it and is renamed into place
# at the end, so an interrupted build leaves nothing that looks finished. With --print a
# script builds nothing: it prints the directory if it is there and fails otherwise (the
# test harness uses that, so a test never starts a ten-minute build under go test's timeout).
set -euo pipefail

export PATH="/usr/local/go/bin:$PATH"
# Not RESCTRL_MON_*: the binaries refuse any RESCTRL_MON_ variable that is not a setting.
cache_root=${RESCTRLMON_TEST_CACHE:-/var/cache/resctrl-mon-test}

# cached NAME VERSION BUILD_FUNCTION [ARGS...]: BUILD_FUNCTION is called with the bin
# directory to fill (and a scratch directory) when the cache has no NAME-VERSION yet.
cached() {
	local name=$1 version=$2 build=$3 mode=${4:-}
	local dir="$cache_root/$name-$version"
	if [ "$mode" = --print ]; then
		[ -d "$dir/bin" ] || { echo "$name $version is not built: run $0" >&2; return 1; }
		echo "$dir/bin"
		return 0
	fi
	if [ ! -d "$dir/bin" ]; then
		mkdir -p "$cache_root"
		# One build at a time per runtime, across concurrent make runs.
		exec {lock}>"$cache_root/.$name.lock"
		flock "$lock"
		if [ ! -d "$dir/bin" ]; then
			# Global, not local: the EXIT trap runs after this function has returned.
			build_tmp=$(mktemp -d "$cache_root/.$name-$version.tmp-XXXXXX")
			local tmp=$build_tmp
			# The scratch directory holds read-only module copies: make them removable first.
			trap 'chmod -R u+w "$build_tmp" 2>/dev/null; rm -rf "$build_tmp"' EXIT
			mkdir -p "$tmp/out/bin" "$tmp/work"
			local start=$SECONDS
			echo "runtimes: building $name $version into $dir" >&2
			"$build" "$tmp/out/bin" "$tmp/work" >&2
			chmod 0755 "$tmp/out"
			rm -rf "$dir"
			mv "$tmp/out" "$dir"
			echo "runtimes: built $name $version in $((SECONDS - start)) s" >&2
		fi
		exec {lock}>&-
	fi
	echo "$dir/bin"
}
