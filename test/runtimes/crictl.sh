#!/usr/bin/env bash
# Builds crictl, the CRI client the tests drive CRI-O and containerd with (one version that
# works with both), into the test cache. See lib.sh; --print only prints the directory.
. "$(dirname "$0")/lib.sh"

version=v1.37.0

build() {
	GOBIN=$1 go install "sigs.k8s.io/cri-tools/cmd/crictl@$version"
}

cached crictl "$version" build "${1:-}"
