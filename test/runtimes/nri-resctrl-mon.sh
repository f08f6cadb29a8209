#!/usr/bin/env bash
# Builds the peer NRI plugin, containers/nri-plugins' resctrl-mon (the adapter's benchmark
# BenchmarkAdapterVsPeer runs it beside ours), into the test cache. See lib.sh; --print only
# prints the directory. Only `make bench` builds it: no test needs it.
. "$(dirname "$0")/lib.sh"

version=v0.14.0

build() {
	local bin=$1 work=$2 mod
	mod=$(go mod download -json "github.com/containers/nri-plugins@$version" | jq -r .Dir)
	[ -n "$mod" ] && [ "$mod" != null ] || { echo "nri-resctrl-mon.sh: go mod download gave no module directory" >&2; return 1; }
	# Its go.mod has replace directives, which go install module@version refuses: build a
	# writable copy of the module instead.
	cp -r "$mod" "$work/nri-plugins"
	chmod -R u+w "$work/nri-plugins"
	cd "$work/nri-plugins"
	GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$bin/nri-resctrl-mon" ./cmd/plugins/resctrl-mon
}

cached nri-resctrl-mon "$version" build "${1:-}"
