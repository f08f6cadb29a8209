#!/usr/bin/env bash
# Writes a release of resctrl-mon into a directory (`make release`, after `make build` and
# `make licenses`):
#   release.sh <version> <revision> <source> <bin dir> <licenses dir> <dist dir> <helm>
# into <dist dir>:
#   resctrl-mon-<version>-linux-<arch>.tar.gz  the four static binaries, LICENSE, CHANGELOG.md,
#                                              README.md and licenses/ (every linked module's)
#   resctrl-mon-<version>.oci.tar              the image (install/image/build.sh)
#   resctrl-mon-<version>.tgz                  the chart, version and appVersion <version>
#   SHA256SUMS                                 sha256sum -c checks the three
# A final version is released once, from one commit, with its CHANGELOG section, and that
# commit is tagged v<version> (check.sh). Other files in <dist dir> (another version's) are
# left alone. The tarball is reproducible
# from the same binaries: names sorted, owner root, every mtime the commit's time.
set -euo pipefail
version=$1 revision=$2 source=$3 bin=$4 licenses=$5 dist=$6 helm=$7
binaries=(resctrl-mon resctrl-mon-hook resctrl-mon-nri resctrl-mon-runtime)

# Semantic versioning (what helm requires of a chart's version), without build metadata:
# "+" is not allowed in an image tag.
if ! [[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; then
	echo "make release: VERSION='$version': want a semantic version such as 1.2.3 or 1.2.3-rc.1" >&2
	exit 1
fi
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bash "$here/check.sh" check "$version" "$top"
if [ ! -x "$helm" ]; then
	echo "make release: helm is missing ('$helm'): put helm 3.8+ on PATH, set HELM=, or run make runtimes" >&2
	exit 1
fi
arch=$(go env GOARCH)
base=resctrl-mon-$version
tarball=$base-linux-$arch.tar.gz image=$base.oci.tar chart=$base.tgz

mkdir -p "$dist"
work=$(mktemp -d "${TMPDIR:-/tmp}/resctrl-mon-release-XXXXXX")
trap 'rm -rf "$work"' EXIT

# The binaries' version is checked rather than trusted: a bin/ built for another version
# would ship under this one's name.
for b in "${binaries[@]}"; do
	[ -x "$bin/$b" ] || { echo "make release: $bin/$b is missing: make build first" >&2; exit 1; }
done
got=$("$bin/resctrl-mon" --version)
[ "$got" = "resctrl-mon version $version" ] || {
	echo "make release: $bin/resctrl-mon --version says '$got', want version $version: make build VERSION=$version" >&2
	exit 1
}

# The tarball.
dir=$work/resctrl-mon-$version-linux-$arch
mkdir -p "$dir"
for b in "${binaries[@]}"; do
	install -m 0755 "$bin/$b" "$dir/$b"
done
install -m 0755 "$top/install/kubectl/kubectl-resctrl_mon" "$dir/"
install -m 0644 "$top/LICENSE" "$top/CHANGELOG.md" "$top/README.md" "$dir/"
cp -R "$licenses" "$dir/licenses"
chmod -R u=rwX,go=rX "$dir/licenses"
mtime=@$(git -C "$top" log -1 --format=%ct 2>/dev/null || echo 0)
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
	-cf - "$(basename "$dir")" | gzip -n -9 >"$work/$tarball"

# The image, then the chart, each written beside the tarball first: dist/ gets all three
# or keeps what it had.
bash "$top/install/image/build.sh" "$bin" "$version" "$revision" "$source" "$work/$image" "$licenses" >/dev/null
mkdir -p "$work/chart"
"$helm" package "$top/install/helm/resctrl-mon" --version "$version" --app-version "$version" \
	--destination "$work/chart" >/dev/null
[ -f "$work/chart/$chart" ] || { echo "make release: helm package wrote $(ls "$work/chart"), want $chart" >&2; exit 1; }
mv "$work/chart/$chart" "$work/$chart"

(cd "$work" && sha256sum "$tarball" "$image" "$chart" >SHA256SUMS)
for f in "$tarball" "$image" "$chart" SHA256SUMS; do
	mv -f "$work/$f" "$dist/$f"
done
(cd "$dist" && cat SHA256SUMS)
bash "$here/check.sh" tag "$version" "$top"
