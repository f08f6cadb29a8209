#!/usr/bin/env bash
# Builds etcd into the test cache for the one-node cluster of test/k8s. See lib.sh; --print
# only prints the directory.
. "$(dirname "$0")/lib.sh"

# Kubernetes 1.37 pins the etcd 3.7 client.
version=v3.7.3

build() {
	local bin=$1 work=$2 mod m
	mod=$(go mod download -json "go.etcd.io/etcd/server/v3@$version" | jq -r .Dir)
	[ -n "$mod" ] && [ "$mod" != null ] || { echo "etcd.sh: go mod download gave no module directory" >&2; return 1; }
	cp -r "$mod" "$work/etcd"
	chmod -R u+w "$work/etcd"
	cd "$work/etcd"
	# The server module replaces its siblings with ../ paths the zip lacks: require them instead.
	for m in go.etcd.io/etcd/api/v3 go.etcd.io/etcd/client/pkg/v3 go.etcd.io/etcd/client/v3 go.etcd.io/etcd/pkg/v3; do
		go mod edit -dropreplace="$m" -require="$m@$version"
	done
	GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/etcd" .
}

cached etcd "$version" build "${1:-}"
