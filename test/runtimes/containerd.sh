#!/usr/bin/env bash
# Builds containerd, ctr and containerd-shim-runc-v2 into the test cache. See lib.sh;
# --print only prints the directory. The shim runs Debian's runc.
. "$(dirname "$0")/lib.sh"

version=v2.4.2

build() {
	local m=github.com/containerd/containerd/v2/cmd
	GOBIN=$1 go install "$m/containerd@$version" "$m/ctr@$version" "$m/containerd-shim-runc-v2@$version"
}

cached containerd "$version" build "${1:-}"
