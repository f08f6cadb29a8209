#!/usr/bin/env bash
# Builds runc into the test cache: a runc that honours runtime-spec 1.3's
# linux.intelRdt.enableMonitoring (runc ≥ 1.4 makes <class>/mon_groups/<container id> itself),
# which Debian 12's runc (1.1) does not. The e2e tests that need it find it here; the other
# tests, and containerd's shim, keep Debian's. cgo for runc's nsenter (gcc), and the seccomp
# build tag with libseccomp-dev (test/deps.sh installs both). See lib.sh; --print only prints
# the directory.
. "$(dirname "$0")/lib.sh"

version=v1.5.1

build() {
	GOBIN=$1 CGO_ENABLED=1 go install -tags seccomp "github.com/opencontainers/runc@$version"
}

cached runc "$version" build "${1:-}"
