#!/usr/bin/env bash
# Builds kubelet, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl into the
# test cache for the one-node cluster of test/k8s. See lib.sh; --print only prints the
# directory. ~11 minutes on a fresh 2-core machine.
. "$(dirname "$0")/lib.sh"

version=v1.37.2

build() {
	local bin=$1 work=$2 mod m sv=0.${version#v1.}
	mod=$(go mod download -json "k8s.io/kubernetes@$version" | jq -r .Dir)
	[ -n "$mod" ] && [ "$mod" != null ] || { echo "kubernetes.sh: go mod download gave no module directory" >&2; return 1; }
	cp -r "$mod" "$work/k8s"
	chmod -R u+w "$work/k8s"
	cd "$work/k8s"
	# The module zip has no staging/ or vendor/: every k8s.io/* replace points into staging,
	# so drop them and require the published staging modules of the same release instead.
	for m in $(sed -n '/^replace (/,/^)/p' go.mod | awk '/=>/{print $1}'); do
		if go list -m -json "$m@v$sv" >/dev/null 2>&1; then
			go mod edit -dropreplace="$m" -require="$m@v$sv"
		else
			go mod edit -dropreplace="$m" -droprequire="$m"
		fi
	done
	rm -f go.work go.work.sum
	local ld="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${sv#0.}"
	for b in kubelet kube-apiserver kube-controller-manager kube-scheduler kubectl; do
		GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$bin/$b" "./cmd/$b"
	done
}

cached kubernetes "$version" build "${1:-}"
