#!/usr/bin/env bash
# Builds the resctrl-mon OCI image offline, from this build's static binaries (`make image`):
#   build.sh <bin dir> <version> <revision> <source> <output archive> <licenses dir>
# FROM scratch: the four binaries in /usr/local/bin, the default config at
# /etc/resctrl-mon/config.yaml, a passwd/group naming root and nobody, the licenses of
# resctrl-mon and of every module linked into the binaries in /licenses (`make licenses`:
# an image without the third-party notices may not be redistributed), and the empty
# directories a runtime mounts over. No shell, no libc. Written as an OCI archive, image
# name localhost/resctrl-mon:<version>, which `ctr -n k8s.io images import` and
# `podman load` take. podman runs on a private store (vfs, cgroupfs, its own
# containers.conf) in a scratch directory that is removed, with any mount under it, at exit.
set -euo pipefail
bin=$1 version=$2 revision=$3 source=$4 out=$5 licenses=$6
name=localhost/resctrl-mon:$version
binaries=(resctrl-mon resctrl-mon-nri resctrl-mon-runtime resctrl-mon-hook)

# An image tag: at most 128 of [A-Za-z0-9_.-], not starting with . or -.
if ! [[ $version =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]]; then
	echo "make image: VERSION='$version': want an image tag (letters, digits, _ . -; at most 128; not starting with . or -)" >&2
	exit 1
fi
command -v podman >/dev/null || { echo "make image: podman is missing (Debian package podman; make deps installs it)" >&2; exit 1; }
for b in "${binaries[@]}"; do
	[ -x "$bin/$b" ] || { echo "make image: $bin/$b is missing: make build first" >&2; exit 1; }
done
[ -f "$licenses/modules.txt" ] || { echo "make image: $licenses/modules.txt is missing: make licenses first" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/resctrl-mon-image-XXXXXX")
cleanup() {
	# podman can leave mounts under its store (vfs makes none, but its runroot may).
	grep -o " $work[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

root=$work/rootfs
mkdir -p "$root"/{usr/local/bin,etc/resctrl-mon,proc,sys,dev,run,tmp}
chmod 1777 "$root/tmp"
for b in "${binaries[@]}"; do
	install -m 0755 "$bin/$b" "$root/usr/local/bin/$b"
done
install -m 0644 "$here/../config.yaml" "$root/etc/resctrl-mon/config.yaml"
cp -R "$licenses" "$root/licenses"
# Readable by all, whatever the umask: the image runs as any user.
chmod -R u=rwX,go=rX "$root/licenses"
printf 'root:x:0:0:root:/:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
# Owned by root whoever builds it, in a stable order.
tar -C "$root" --sort=name --owner=0 --group=0 --numeric-owner -cf "$work/rootfs.tar" .

printf '[engine]\nlock_type = "file"\nevents_logger = "none"\n' >"$work/containers.conf"
export CONTAINERS_CONF=$work/containers.conf
podman=(podman --root "$work/store" --runroot "$work/run" --tmpdir "$work/tmp"
	--storage-driver vfs --cgroup-manager cgroupfs)
"${podman[@]}" import \
	--change 'ENV PATH=/usr/local/bin' \
	--change 'ENTRYPOINT ["/usr/local/bin/resctrl-mon"]' \
	--change 'CMD ["--help"]' \
	--change "LABEL org.opencontainers.image.title=resctrl-mon" \
	--change "LABEL org.opencontainers.image.description=per-pod resctrl monitoring groups: OCI hook, NRI adapter, runtime wrapper, exporter" \
	--change "LABEL org.opencontainers.image.version=$version" \
	--change "LABEL org.opencontainers.image.revision=$revision" \
	--change "LABEL org.opencontainers.image.source=$source" \
	--change "LABEL org.opencontainers.image.licenses=Apache-2.0" \
	"$work/rootfs.tar" "$name" >/dev/null
mkdir -p "$(dirname "$out")"
tmp=$out.tmp.$$
"${podman[@]}" save -q --format oci-archive --output "$tmp" "$name" >/dev/null
mv -f "$tmp" "$out"
echo "$out: $name"
