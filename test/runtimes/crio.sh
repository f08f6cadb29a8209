#!/usr/bin/env bash
# Builds CRI-O's crio and pinns into the test cache. See lib.sh; --print only prints the
# directory. Needs gcc, make, pkg-config and libseccomp-dev (test/deps.sh); CRI-O runs
# Debian's runc and conmon.
. "$(dirname "$0")/lib.sh"

# The newest CRI-O the module proxy serves whole (v1.35.0, v1.34.1 and v1.33.0 are not).
version=v1.34.0

build() {
	local bin=$1 work=$2 mod
	mod=$(go mod download -json "github.com/cri-o/cri-o@$version" | jq -r .Dir)
	[ -n "$mod" ] && [ "$mod" != null ] || { echo "crio.sh: go mod download gave no module directory" >&2; return 1; }
	# The module cache is read-only and has no vendor directory: build a writable copy and
	# let go resolve (and record) the dependencies itself.
	cp -r "$mod" "$work/cri-o"
	chmod -R u+w "$work/cri-o"
	cd "$work/cri-o"
	# CRI-O's Makefile tags, less what needs libraries Debian's base lacks (btrfs, ostree,
	# gpgme, devicemapper); seccomp needs libseccomp-dev.
	GOFLAGS=-mod=mod CGO_ENABLED=1 go build -trimpath -o "$bin/crio" \
		-tags "containers_image_ostree_stub containers_image_openpgp exclude_graphdriver_btrfs btrfs_noversion exclude_graphdriver_devicemapper seccomp" \
		./cmd/crio
	make -C pinns
	# pinns's Makefile writes ../bin/pinns.
	install -m 0755 bin/pinns "$bin/pinns"
}

cached crio "$version" build "${1:-}"
