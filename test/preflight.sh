#!/usr/bin/env bash
# `make test`'s first step: makes sure this host can run the whole suite, installing what it
# can (test/deps.sh, as root), and otherwise stops with what is missing. Most suites need root
# and /dev/fuse (the resctrl simulator), and the end-to-end ones real runtimes; without them
# they skip, and `go test` reports a skipped package as "ok": a run that proved nothing
# would look like a pass. So a missing precondition is an error, unless PARTIAL=1, which
# runs anyway and says loudly which suites will skip. The Makefile pairs the two: without
# PARTIAL=1 the tests run with RESCTRLSIM_REQUIRE=1, so a skip the checks below did not
# foresee fails too.
set -uo pipefail
cd "$(dirname "$0")/.."

partial=${PARTIAL:-0}
missing=() # what is missing, and what it costs
skips=()   # the suites that will skip for it

# The packages whose tests mount the simulator (they skip without root or /dev/fuse).
sim_suites=$(grep -rl --include='*_test.go' -e 'MountT(' lib test | xargs -n1 dirname | sort -u | tr '\n' ' ')

lack() { # lack WHAT SUITES...
	missing+=("$1")
	shift
	skips+=("$*")
}

root=1
if [ "$(id -u)" != 0 ]; then
	root=0
	lack "not root (uid $(id -u)): mounting the simulator, the proc connector and containers need root" \
		"every test that mounts the simulator (in ${sim_suites% }), test/resctrlsim/cmd/resctrlsim, the proc connector tests of test/resctrlsim/procevents, all of test/e2e"
elif ! bash test/deps.sh; then
	lack "test/deps.sh failed (its message is above)" "whatever it did not install"
fi
afterdeps=""
((root)) || afterdeps=" (test/deps.sh installs it, as root)"

fuse_suites="every test that mounts the simulator (in ${sim_suites% }), test/resctrlsim/cmd/resctrlsim"
# -c first: <> would create a missing /dev/fuse as a plain file.
if ! [ -c /dev/fuse ]; then
	lack "/dev/fuse is missing: load the fuse module (modprobe fuse), or give the container the device" "$fuse_suites"
elif ! { : <>/dev/fuse; } 2>/dev/null; then
	lack "/dev/fuse cannot be opened read-write ($(stat -c '%A %U:%G' /dev/fuse))" "$fuse_suites"
fi

# As the end-to-end tests look for a runtime (exec.LookPath): an executable regular file on
# PATH, or in the sbin directories a non-login root shell may lack on PATH (Debian installs
# runc as /usr/sbin/runc).
have() {
	local d IFS=:
	for d in $PATH /usr/sbin /sbin /usr/local/sbin; do
		[ -f "${d:-.}/$1" ] && [ -x "${d:-.}/$1" ] && return 0
	done
	return 1
}
have runc || lack "runc is not installed$afterdeps" "test/e2e: the runc tests (and TestDemo fails: make demo runs runc)"
have crun || lack "crun is not installed$afterdeps" "test/e2e: the crun tests"
have podman || lack "podman is not installed$afterdeps" "test/e2e: the podman tests (hooks.d)"
# The containers' rootfs is a static busybox: a dynamic one cannot run without its libraries.
# (ldd fails on a static binary, saying so.)
if ! [ -x /bin/busybox ] || [[ $(LC_ALL=C ldd /bin/busybox 2>&1) != *"not a dynamic executable"* ]]; then
	lack "/bin/busybox is missing or not static (package busybox-static)$afterdeps" "test/e2e: every test that runs a container"
fi
have systemd-analyze || lack "systemd-analyze is not installed (package systemd)$afterdeps" "test/e2e: TestInstall's check of the shipped units"

if ((${#missing[@]} == 0)); then
	if [ "$partial" = 1 ]; then
		echo "preflight: PARTIAL=1, but this host has everything checked; skips are allowed all the same" >&2
	fi
	exit 0
fi

if [ "$partial" != 1 ]; then
	{
		echo "make test: this host cannot run the whole suite:"
		printf '  - %s\n' "${missing[@]}"
		echo "Without them most suites would skip and still print \"ok\". Run it as root on a host"
		echo "with /dev/fuse (sudo make test), or run what can run, knowing the rest is skipped:"
		echo "  make test PARTIAL=1"
	} >&2
	exit 1
fi

bar='################################################################################'
{
	echo "$bar"
	echo "# PARTIAL RUN (PARTIAL=1): these suites will SKIP and prove nothing:"
	for i in "${!missing[@]}"; do
		echo "#   ${skips[$i]}"
		echo "#       because ${missing[$i]}"
	done
	echo "# RESCTRLSIM_REQUIRE is off: skips pass. This is not a passing 'make test'."
	echo "$bar"
} >&2
