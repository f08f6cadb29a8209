#!/usr/bin/env bash
# Builds Prometheus into the test cache for test/k8s: Debian's package is built without
# Kubernetes service discovery, which the chart's scrape annotations are for. The web UI's
# assets are not built (no npm here); the API the tests query is all there. See lib.sh;
# --print only prints the directory.
. "$(dirname "$0")/lib.sh"

# Prometheus 3.x tags its Go module v0.3xx.
version=v0.316.0

# Only the Kubernetes service discovery (Prometheus' own build tags): every other cloud's SDK
# would more than double the build.
build() {
	GOBIN=$1 CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" -tags remove_all_sd,enable_kubernetes_sd \
		"github.com/prometheus/prometheus/cmd/prometheus@$version"
}

cached prometheus "$version" build "${1:-}"
