#!/usr/bin/env bash
# Builds the Prometheus Operator and its config reloader into the test cache for test/k8s,
# with the operator's CRDs beside them (crds/). Its go.mod replaces its own two API modules
# with local directories, which `go install module@version` refuses, and a module's zip
# leaves those nested modules out: the three modules are fetched from the Go module proxy
# at the same version and put back together in a scratch directory, as the repository lays
# them out, and built there as the main module. See lib.sh; --print only prints the directory.
. "$(dirname "$0")/lib.sh"

# The newest release whose three modules the proxy serves.
version=v0.93.1
module=github.com/prometheus-operator/prometheus-operator

build() {
	local out=$1 work=$2 src=$2/src
	local main apis client
	main=$(go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	apis=$(go mod download -json "$module/pkg/apis/monitoring@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	client=$(go mod download -json "$module/pkg/client@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	[ -d "$main" ] && [ -d "$apis" ] && [ -d "$client" ] || { echo "prometheus-operator: $module@$version: a module was not downloaded" >&2; return 1; }
	cp -R "$main" "$src"
	chmod -R u+w "$src"
	rm -rf "$src/pkg/apis/monitoring" "$src/pkg/client"
	mkdir -p "$src/pkg/apis"
	cp -R "$apis" "$src/pkg/apis/monitoring"
	cp -R "$client" "$src/pkg/client"
	chmod -R u+w "$src"
	(cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/" ./cmd/operator ./cmd/prometheus-config-reloader)
	mkdir -p "$out/../crds"
	cp "$src"/example/prometheus-operator-crd/monitoring.coreos.com_*.yaml "$out/../crds/"
}

cached prometheus-operator "$version" build "${1:-}"
