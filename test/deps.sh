#!/usr/bin/env bash
# Installs what the tests and the demo need on a Debian machine, as root. Idempotent: a
# package already present is not fetched again. Go itself is expected at /usr/local/go or on
# PATH (the module proxy provides every Go dependency).
set -euo pipefail

# Debian packages, and how to tell each is there.
declare -A pkgs=(
	[fuse3]="command -v fusermount3"        # FUSE userspace (the simulator mounts with mount(2); fusermount is the fallback)
	[util-linux]="command -v setpriv"       # tests drop privileges with setpriv
	[runc]="test -x /usr/sbin/runc"         # the demo's and the end-to-end tests' runtime
	[crun]="command -v crun"                # the second OCI runtime under test
	[podman]="command -v podman"            # hooks.d (--hooks-dir), the CRI-O mechanism
	[conmon]="command -v conmon"            # podman's and CRI-O's container monitor
	[catatonit]="command -v catatonit"      # podman builds its pods' infra (pause) image from it
	[netavark]="test -x /usr/lib/podman/netavark"  # podman's network backend, even with --network none
	[busybox-static]="dpkg -s busybox-static"      # the containers' rootfs (the dynamic busybox will not do)
	[jq]="command -v jq"                    # the demo edits config.json; crio.sh reads JSON
	[systemd]="command -v systemd-analyze"  # the install test verifies the shipped units
	[make]="command -v make"                # the install test runs make install
	# Building CRI-O (test/runtimes/crio.sh): cgo with libseccomp, and its static pinns.
	[gcc]="command -v gcc"
	[libc6-dev]="dpkg -s libc6-dev"
	[pkg-config]="command -v pkg-config"
	[libseccomp-dev]="dpkg -s libseccomp-dev"
	# The exporter's end-to-end test scrapes serve with a real Prometheus; promtool (the same
	# package) checks a scrape (lib/exporter) and the chart's rules and their unit tests (test/k8s).
	[prometheus]="command -v prometheus && command -v promtool"
	[openssl]="command -v openssl"          # test/k8s/cluster.sh makes the one-node cluster's PKI
	[curl]="command -v curl"                # test/k8s/cluster.sh waits on the daemons' health endpoints
	[docker-registry]="test -x /usr/bin/docker-registry"  # the release tests push to a real registry on loopback
	[skopeo]="command -v skopeo"            # make push copies the image archive into a registry
	[apparmor]="command -v apparmor_parser" # the chart's AppArmor profile is compiled (not loaded) in a test
)

missing=()
for p in "${!pkgs[@]}"; do
	eval "${pkgs[$p]}" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing ${missing[*]}; run as root (or sudo make ...) to install them" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	# Debian starts a Prometheus service on :9090 when it installs the package; the tests
	# start their own on loopback ports, so the one this script brought is stopped again.
	if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null; then
		systemctl disable --now prometheus.service >/dev/null 2>&1 || true
	fi
	# The same for the registry's service (:5000): the tests start their own on loopback.
	if [[ " ${missing[*]} " == *" docker-registry "* ]] && command -v systemctl >/dev/null; then
		systemctl disable --now docker-registry.service >/dev/null 2>&1 || true
	fi
fi

# The simulator needs the fuse device; on a fresh machine the module may not be loaded.
if [ ! -e /dev/fuse ]; then
	modprobe fuse 2>/dev/null || true
fi
[ -e /dev/fuse ] || { echo "deps: /dev/fuse is missing: load the fuse module" >&2; exit 1; }
