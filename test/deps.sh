#!/usr/bin/env bash
# Installs what the tests and the demo need on a Debian machine, as root. Idempotent: a
# package already present is not fetched again. Go itself is expected at /usr/local/go or on
# PATH (the module proxy provides every Go dependency).
set -euo pipefail

# Debian packages, and a command that shows each is there.
declare -A pkgs=(
	[fuse3]=fusermount3           # FUSE userspace (the simulator mounts with mount(2), fusermount is the fallback)
	[util-linux]=setpriv          # tests drop privileges with setpriv
	[runc]=runc                   # the demo's and the end-to-end tests' runtime
	[busybox-static]=busybox      # the containers' rootfs
	[jq]=jq                       # the demo edits config.json with it
)

missing=()
for p in "${!pkgs[@]}"; do
	command -v "${pkgs[$p]}" >/dev/null 2>&1 || missing+=("$p")
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
fi

# The simulator needs the fuse device; on a fresh machine the module may not be loaded.
if [ ! -e /dev/fuse ]; then
	modprobe fuse 2>/dev/null || true
fi
[ -e /dev/fuse ] || { echo "deps: /dev/fuse is missing: load the fuse module" >&2; exit 1; }
