#!/usr/bin/env bash
# Pushes a release written by `make release` to a registry (`make push`):
#   push.sh <registry host:port> <repository prefix or ""> <insecure 0|1> <version> <dist dir> <helm>
# The image goes to <registry>/[<prefix>/]resctrl-mon:<version> (skopeo copy from the OCI
# archive), the chart to oci://<registry>/[<prefix>/]charts (helm push: the chart's name and
# version make the rest, .../charts/resctrl-mon:<version>). The files are checked against
# SHA256SUMS first. Plain HTTP (and no certificate check) only for a loopback registry or
# with insecure=1: anything else is pushed over verified TLS, with the credentials skopeo and
# helm already have (skopeo login / helm registry login).
set -euo pipefail
registry=$1 prefix=$2 insecure=$3 version=$4 dist=$5 helm=$6

if [ -z "$registry" ]; then
	echo "make push: REGISTRY is empty: want host[:port] of the registry, e.g. make push REGISTRY=registry.example:5000" >&2
	exit 1
fi
if [[ $registry == *://* || $registry == */* ]]; then
	echo "make push: REGISTRY='$registry': want host[:port] only (no scheme, no path: the path goes in REPOSITORY)" >&2
	exit 1
fi
prefix=${prefix#/}
prefix=${prefix%/}
if [[ -n $prefix && ! $prefix =~ ^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$ ]]; then
	echo "make push: REPOSITORY='$prefix': want a lowercase repository path such as team/tools" >&2
	exit 1
fi
case $insecure in 0 | 1) ;; *)
	echo "make push: INSECURE='$insecure': want 0 or 1" >&2
	exit 1
	;;
esac
command -v skopeo >/dev/null || { echo "make push: skopeo is missing (Debian package skopeo)" >&2; exit 1; }
[ -x "$helm" ] || { echo "make push: helm is missing ('$helm'): put helm 3.8+ on PATH, set HELM=, or run make runtimes" >&2; exit 1; }

# Loopback: 127.0.0.0/8, ::1 or localhost, with or without a port.
host=$registry
case $host in
\[*\]*) host=${host%%]*}; host=${host#[} ;;
*:*:*) ;; # a bare IPv6 address: no port to strip
*) host=${host%%:*} ;;
esac
case $host in 127.* | ::1 | localhost) insecure=1 ;; esac

base=resctrl-mon-$version
image=$dist/$base.oci.tar chart=$dist/$base.tgz
for f in "$image" "$chart" "$dist/SHA256SUMS"; do
	[ -f "$f" ] || { echo "make push: $f is missing: make release VERSION=$version first" >&2; exit 1; }
done
(cd "$dist" && grep -E " [*]?($base\.oci\.tar|$base\.tgz)\$" SHA256SUMS | sha256sum --quiet -c -) || {
	echo "make push: $image or $chart does not match $dist/SHA256SUMS: make release again" >&2
	exit 1
}

repo=$registry${prefix:+/$prefix}
tls=() plain=()
if [ "$insecure" = 1 ]; then
	tls=(--dest-tls-verify=false)
	plain=(--plain-http)
fi
# A version is pushed once: pushing it again would change what its tag pulls on nodes that
# already have it, and what a digest pinned from the first push no longer names.
if skopeo inspect --raw "${tls[@]/--dest-/--}" "docker://$repo/resctrl-mon:$version" >/dev/null 2>&1; then
	echo "make push: $repo/resctrl-mon:$version is already in the registry: a version is pushed once; release the next version" >&2
	exit 1
fi
if "$helm" show chart "${plain[@]}" "oci://$repo/charts/resctrl-mon" --version "$version" >/dev/null 2>&1; then
	echo "make push: oci://$repo/charts/resctrl-mon $version is already in the registry: a version is pushed once; release the next version" >&2
	exit 1
fi
digestfile=$(mktemp)
trap 'rm -f "$digestfile"' EXIT
skopeo copy --quiet "${tls[@]}" --digestfile "$digestfile" "oci-archive:$image" "docker://$repo/resctrl-mon:$version"
echo "image: $repo/resctrl-mon:$version@$(cat "$digestfile")"
"$helm" push "${plain[@]}" "$chart" "oci://$repo/charts"
echo "chart: oci://$repo/charts/resctrl-mon --version $version"
