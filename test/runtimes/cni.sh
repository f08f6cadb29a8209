#!/usr/bin/env bash
# Builds the CNI loopback plugin into the test cache: CRI-O reports its network ready (and
# kubelet its node Ready) only when the placeholder network's plugin binary exists. See lib.sh.
. "$(dirname "$0")/lib.sh"

version=v1.9.1

build() {
	GOBIN=$1 CGO_ENABLED=0 go install "github.com/containernetworking/plugins/plugins/main/loopback@$version"
}

cached cni "$version" build "${1:-}"
