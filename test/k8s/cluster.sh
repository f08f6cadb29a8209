#!/usr/bin/env bash
# A real one-node Kubernetes for the tests, every path under $KWORK (short: containerd's shim
# sockets must fit in 108 bytes), every listener on 127.0.0.1:
#   cluster.sh up containerd|crio   start the runtime, etcd, the control plane and kubelet;
#                                   wait for the node to be Ready
#   cluster.sh down                 stop all of it and restore what kubelet changed on the host
#                                   (sysctls, host directories, mounts, cgroups)
# The recipe and every workaround are in ../shared/notes/kubernetes.md of the steering repo;
# the binaries come from the test cache (make runtimes). containerd runs with NRI enabled on
# $KWORK/c/nri/nri.sock; CRI-O reads hooks from $KWORK/o/hooks.d (NRI off, the hooks' mode).
# The workload and sandbox image is localhost/busybox:k8s, made from Debian's static busybox.
# Extra images to load into the runtime: the OCI archives named in $KIMAGES (spaces); a static
# binary named by $KFORKER is copied into the test image as /bin/forker. containerd gets a
# runtime handler "resctrl-mon" whose runtime is $KWRAPPER, reading $KWRAPPER_CONFIG.
# $KREGISTRY (host:port on loopback, plain HTTP) is a registry both runtimes pull from, as a
# node pulls from a cluster's registry: containerd through its hosts config (config_path),
# CRI-O through a registries.conf of its own (the host's /etc/containers is left alone).
set -euo pipefail
: "${KWORK:?KWORK names the directory of the cluster}"
here=$(cd "$(dirname "$0")" && pwd)
rt="$here/../runtimes"
KBIN=$(bash "$rt/kubernetes.sh" --print)
EBIN=$(bash "$rt/etcd.sh" --print)
CBIN=$(bash "$rt/containerd.sh" --print)
OBIN=$(bash "$rt/crio.sh" --print)
CRICTL=$(bash "$rt/crictl.sh" --print)/crictl
CNIBIN=$(bash "$rt/cni.sh" --print)
IMG=localhost/busybox:k8s
NODE=$(hostname)
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# What kubelet changes on the host, recorded before it first runs (restored by down).
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"
HOSTDIRS="/var/lib/kubelet /usr/libexec/kubernetes /var/log/containers /var/log/pods /var/lib/cni /run/netns"

log() { echo "cluster: $*" >&2; }
wait_for() { # wait_for SECONDS WHAT CMD...
	local n=$(($1 * 2)) what=$2; shift 2
	for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
	log "$what: not there after $((n / 2)) s"; return 1
}

hoststate() {
	local s=$KWORK/host-state
	[ -d "$s" ] && return 0
	mkdir -p "$s"
	for k in $SYSCTLS; do echo "$k = $(sysctl -n "$k")"; done >"$s/sysctl"
	for d in $HOSTDIRS; do [ -e "$d" ] && touch "$s/existed$(echo "$d" | tr / _)"; done
	true
}

mkimage() {
	local out=$KWORK/img/busybox.oci.tar w r
	[ -f "$out" ] && return 0
	mkdir -p "$KWORK/img"
	w=$(mktemp -d "$KWORK/img/work-XXXX"); r=$w/rootfs
	mkdir -p "$r"/{bin,dev,etc,proc,root,run,sys,tmp,var/tmp}
	chmod 1777 "$r/tmp" "$r/var/tmp"
	cp /bin/busybox "$r/bin/busybox"
	if [ -n "${KFORKER:-}" ]; then cp "$KFORKER" "$r/bin/forker"; fi
	for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
	tar -C "$r" -cf "$w/rootfs.tar" .
	printf '[engine]\nlock_type = "file"\nevents_logger = "none"\n' >"$w/containers.conf"
	local p=(podman --root "$w/st" --runroot "$w/run" --tmpdir "$w/tmp" --storage-driver vfs --cgroup-manager cgroupfs)
	CONTAINERS_CONF=$w/containers.conf "${p[@]}" import \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'CMD ["/bin/sleep","infinity"]' "$w/rootfs.tar" "$IMG" >/dev/null 2>&1
	CONTAINERS_CONF=$w/containers.conf "${p[@]}" save --format oci-archive --output "$out" "$IMG" >/dev/null 2>&1
	grep -o " $w[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount 2>/dev/null || true
	rm -rf "$w"
}

pki() {
	local d=$KWORK/cp/pki
	[ -f "$d/ca.crt" ] && return 0
	mkdir -p "$d"
	(
		cd "$d"
		openssl genrsa -out ca.key 2048 2>/dev/null
		openssl req -x509 -new -key ca.key -sha256 -days 30 -subj "/CN=resctrl-mon-test-ca" -out ca.crt
		cert() { # cert NAME CN O SAN EXTKEYUSAGE
			local subj="/CN=$2"
			[ -n "$3" ] && subj="/O=$3/CN=$2"
			openssl genrsa -out "$1.key" 2048 2>/dev/null
			openssl req -new -key "$1.key" -subj "$subj" -out "$1.csr"
			{
				echo "basicConstraints=CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
				echo "extendedKeyUsage=$5"; [ -n "$4" ] && echo "subjectAltName=$4"
			} >"$1.ext"
			openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -sha256 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
			rm -f "$1.csr" "$1.ext"
		}
		cert apiserver kube-apiserver "" "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.96.0.1" serverAuth
		cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "" clientAuth
		cert admin admin system:masters "" clientAuth
		cert controller-manager system:kube-controller-manager "" "" clientAuth
		cert scheduler system:kube-scheduler "" "" clientAuth
		cert kubelet-client "system:node:$NODE" system:nodes "" clientAuth
		cert kubelet-serving "$NODE" "" "DNS:$NODE,DNS:localhost,IP:127.0.0.1" serverAuth
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	)
	local kc
	for kc in admin controller-manager scheduler kubelet-client; do
		cat >"$KWORK/cp/$kc.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: here
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$d/ca.crt"}
users:
- name: u
  user: {client-certificate: "$d/$kc.crt", client-key: "$d/$kc.key"}
contexts:
- name: here
  context: {cluster: here, user: u}
current-context: here
KC
	done
}

containerd_up() {
	local b=$KWORK/c
	mkdir -p "$b/cni/net.d" "$b/cni/bin" "$b/nri/plugins" "$b/nri/conf.d" "$b/certs.d"
	if [ -n "${KREGISTRY:-}" ]; then
		mkdir -p "$b/certs.d/$KREGISTRY"
		printf 'server = "http://%s"\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "$KREGISTRY" "$KREGISTRY" >"$b/certs.d/$KREGISTRY/hosts.toml"
	fi
	# A CNI config makes containerd report NetworkReady (kubelet's node Ready needs it);
	# cniVersion 1.0.0: go-cni then never runs the plugin, and host-network pods never call CNI.
	echo '{"cniVersion": "1.0.0", "name": "placeholder", "plugins": [{"type": "loopback"}]}' >"$b/cni/net.d/10-placeholder.conflist"
	cat >"$b/config.toml" <<TOML
version = 3
root = "$b/root"
state = "$b/state"
temp = "$b/tmp"
[grpc]
  address = "$b/containerd.sock"
[ttrpc]
  address = "$b/containerd.sock.ttrpc"
[debug]
  address = ""
  level = "info"
[metrics]
  address = ""
[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    path = "$b/opt"
  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = "$b/s"
  [plugins.'io.containerd.nri.v1.nri']
    disable = false
    socket_path = "$b/nri/nri.sock"
    plugin_path = "$b/nri/plugins"
    plugin_config_path = "$b/nri/conf.d"
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$IMG"
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = "$b/certs.d"
  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true         # root lacks CAP_SYS_RESOURCE here
    netns_mounts_under_state_dir = true   # pod netns under state, not /run/netns
    cdi_spec_dirs = ["$b/cdi"]
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "${KRUNTIME:-$(command -v runc)}"
          Root = "$b/runc"
          SystemdCgroup = false
      # The handler of the chart's RuntimeClass (wrapper.enabled): its runtime is the wrapper
      # the chart installs at $KWRAPPER; containerd checks the path only when a pod uses it.
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.resctrl-mon]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.resctrl-mon.options]
          BinaryName = "${KWRAPPER:-/usr/local/bin/resctrl-mon-runtime}"
          Root = "$b/runc"
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["$b/cni/bin"]
      conf_dir = "$b/cni/net.d"
  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
TOML
	# The runc shim hands the runtime (and so the wrapper) containerd's environment.
	PATH=$CBIN:$PATH RESCTRL_MON_CONFIG=${KWRAPPER_CONFIG:-/etc/resctrl-mon/config.yaml} setsid "$CBIN/containerd" --config "$b/config.toml" >>"$b/containerd.log" 2>&1 </dev/null &
	echo $! >"$b/containerd.pid"
	wait_for 30 containerd "$CBIN/ctr" --address "$b/containerd.sock" version
	local i
	for i in "$KWORK/img/busybox.oci.tar" ${KIMAGES:-}; do
		"$CBIN/ctr" --address "$b/containerd.sock" -n k8s.io images import "$i" >/dev/null
	done
	printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 30\n' "$b/containerd.sock" "$b/containerd.sock" >"$b/crictl.yaml"
	echo "$b/containerd.sock" >"$KWORK/runtime.sock"
}

# crio_runtime prints the OCI runtime CRI-O runs. kubelet sends every container a hugetlb
# limit (0 for each page size) and CRI-O passes it on when /proc/cgroups lists hugetlb; on a
# hybrid host whose hugetlb controller sits in cgroup2 only (no v1 hierarchy: /proc/cgroups
# says hierarchy 0), runc's v1 cgroup manager then fails every container ("cannot set hugetlb
# limit: container could not join or create cgroup"). There, runc is run through a shim that
# drops the hugetlb limits from the bundle's config.json (limits of 0 on a controller the
# container cannot join) and execs runc with the same arguments.
crio_runtime() {
	local b=$1 runc=${KRUNTIME:-$(command -v runc)}
	if [ -d /sys/fs/cgroup/unified ] && awk '$1 == "hugetlb" && $2 == 0 {f=1} END {exit !f}' /proc/cgroups; then
		cat >"$b/runc-nohugetlb" <<SHIM
#!/bin/sh
# test/k8s/cluster.sh: runc without hugetlb limits (this host's hugetlb is in cgroup2 only).
bundle= prev=
for a in "\$@"; do
	case \$prev in --bundle|-b) bundle=\$a ;; esac
	case \$a in --bundle=*) bundle=\${a#--bundle=} ;; esac
	prev=\$a
done
if [ -n "\$bundle" ] && [ -f "\$bundle/config.json" ]; then
	jq -c 'del(.linux.resources.hugepageLimits)' "\$bundle/config.json" >"\$bundle/config.json.nohugetlb" &&
		mv -f "\$bundle/config.json.nohugetlb" "\$bundle/config.json"
fi
exec $runc "\$@"
SHIM
		chmod +x "$b/runc-nohugetlb"
		echo "$b/runc-nohugetlb"
		return
	fi
	echo "$runc"
}

crio_up() {
	local b=$KWORK/o w
	mkdir -p "$b"/{root,run,tmp,hooks.d,runc,conf.d,cni/net.d,cni/bin}
	echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$b/policy.json"
	mkdir -p "$b/registries.conf.d"
	{
		echo 'unqualified-search-registries = []'
		if [ -n "${KREGISTRY:-}" ]; then printf '[[registry]]\nlocation = "%s"\ninsecure = true\n' "$KREGISTRY"; fi
	} >"$b/registries.conf"
	echo '{"cniVersion": "1.0.0", "name": "placeholder", "plugins": [{"type": "loopback"}]}' >"$b/cni/net.d/10-placeholder.conflist"
	# CRI-O ignores a CNI config whose plugin binary is missing.
	cp "$CNIBIN/loopback" "$b/cni/bin/loopback"
	cat >"$b/crio.conf" <<TOML
[crio]
root = "$b/root"
runroot = "$b/run"
storage_driver = "vfs"
log_dir = "$b/pods"
version_file = "$b/version"
version_file_persist = "$b/version.persist"
clean_shutdown_file = "$b/clean.shutdown"
[crio.api]
listen = "$b/crio.sock"
stream_address = "127.0.0.1"
stream_port = "0"
[crio.runtime]
default_runtime = "runc"
cgroup_manager = "cgroupfs"
hooks_dir = ["$b/hooks.d"]
pinns_path = "$OBIN/pinns"
namespaces_dir = "$b/ns"
container_exits_dir = "$b/exits"
container_attach_socket_dir = "$b/attach"
decryption_keys_path = "$b/keys"
cdi_spec_dirs = ["$b/cdi"]
disable_hostport_mapping = true
irqbalance_config_file = "$b/irqbalance"
irqbalance_config_restore_file = "disable"
drop_infra_ctr = true
log_level = "info"
[crio.runtime.runtimes.runc]
runtime_path = "$(crio_runtime "$b")"
runtime_type = "oci"
runtime_root = "$b/runc"
monitor_path = "$(command -v conmon)"
monitor_cgroup = "pod"
monitor_env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
[crio.image]
pause_image = "$IMG"
pause_command = ""
signature_policy = "$b/policy.json"
signature_policy_dir = "$b/policies"
big_files_temporary_dir = "$b/tmp"
[crio.network]
network_dir = "$b/cni/net.d"
plugin_dirs = ["$b/cni/bin"]
[crio.metrics]
enable_metrics = false
[crio.nri]
enable_nri = false
TOML
	mkdir -p "$KWORK/img"
	w=$(mktemp -d "$KWORK/img/pst-XXXX")
	printf '[engine]\nlock_type = "file"\nevents_logger = "none"\n' >"$w/containers.conf"
	local i
	for i in "$KWORK/img/busybox.oci.tar" ${KIMAGES:-}; do
		CONTAINERS_CONF=$w/containers.conf podman --root "$b/root" --runroot "$b/run" --tmpdir "$w/tmp" \
			--storage-driver vfs --cgroup-manager cgroupfs load -i "$i" >/dev/null 2>&1
	done
	grep -o " $b/r[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount 2>/dev/null || true
	rm -rf "$w"
	PATH=$OBIN:$PATH setsid "$OBIN/crio" --config "$b/crio.conf" --config-dir "$b/conf.d" \
		--registries-conf "$b/registries.conf" --registries-conf-dir "$b/registries.conf.d" >>"$b/crio.log" 2>&1 </dev/null &
	echo $! >"$b/crio.pid"
	printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 30\n' "$b/crio.sock" "$b/crio.sock" >"$b/crictl.yaml"
	wait_for 60 crio "$CRICTL" --config "$b/crictl.yaml" version
	echo "$b/crio.sock" >"$KWORK/runtime.sock"
}

start() { # start NAME CMD... (pid in cp/NAME.pid, log in cp/logs/NAME.log)
	local n=$1; shift
	setsid "$@" >>"$KWORK/cp/logs/$n.log" 2>&1 </dev/null &
	echo $! >"$KWORK/cp/$n.pid"
}

controlplane_up() {
	local d=$KWORK/cp p=$KWORK/cp/pki
	mkdir -p "$d/etcd" "$d/logs"
	start etcd "$EBIN/etcd" --name here --data-dir "$d/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster here=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381 --log-level warn
	wait_for 30 etcd curl -sf http://127.0.0.1:2379/health
	start kube-apiserver "$KBIN/kube-apiserver" \
		--etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 --secure-port=6443 \
		--advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
		--tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
		--service-cluster-ip-range=10.96.0.0/16 --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--kubelet-client-certificate="$p/apiserver-kubelet-client.crt" --kubelet-client-key="$p/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$p/ca.crt" --kubelet-preferred-address-types=Hostname \
		--allow-privileged=true --cert-dir="$d/apiserver-certs" --v=1
	wait_for 90 kube-apiserver curl -sf --cacert "$p/ca.crt" https://127.0.0.1:6443/readyz
	start kube-controller-manager "$KBIN/kube-controller-manager" \
		--kubeconfig="$d/controller-manager.kubeconfig" \
		--authentication-kubeconfig="$d/controller-manager.kubeconfig" --authorization-kubeconfig="$d/controller-manager.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
		--service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
		--cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
		--use-service-account-credentials=true --allocate-node-cidrs=false --cert-dir="$d/kcm-certs" --v=1
	start kube-scheduler "$KBIN/kube-scheduler" --kubeconfig="$d/scheduler.kubeconfig" \
		--authentication-kubeconfig="$d/scheduler.kubeconfig" --authorization-kubeconfig="$d/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --v=1
}

kubelet_up() {
	local k=$KWORK/k p=$KWORK/cp/pki sock
	sock=$(cat "$KWORK/runtime.sock")
	mkdir -p "$k/manifests" "$k/root" "$k/logs"
	cat >"$k/kubelet-config.yaml" <<EOF2
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$sock
staticPodPath: $k/manifests
fileCheckFrequency: 2s
podLogsDir: $k/logs
volumePluginDir: $k/volume-plugins
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
failSwapOn: false
resolvConf: ""
clusterDomain: cluster.local
tlsCertFile: $p/kubelet-serving.crt
tlsPrivateKeyFile: $p/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $p/ca.crt}
authorization: {mode: Webhook}
EOF2
	setsid "$KBIN/kubelet" --config="$k/kubelet-config.yaml" --root-dir="$k/root" --cert-dir="$k/pki" \
		--kubeconfig="$KWORK/cp/kubelet-client.kubeconfig" --v=2 >>"$k/kubelet.log" 2>&1 </dev/null &
	echo $! >"$k/kubelet.pid"
	wait_for 60 kubelet curl -sf http://127.0.0.1:10248/healthz
}

up() {
	local runtime=$1
	mkdir -p "$KWORK"
	hoststate
	mkimage
	pki
	case $runtime in
	containerd) containerd_up ;;
	crio) crio_up ;;
	*) log "runtime $runtime: want containerd or crio"; return 2 ;;
	esac
	controlplane_up
	kubelet_up
	export KUBECONFIG=$KWORK/cp/admin.kubeconfig
	wait_for 60 "node $NODE" "$KBIN/kubectl" get node "$NODE"
	"$KBIN/kubectl" wait --for=condition=Ready "node/$NODE" --timeout=120s >/dev/null
	# Pods need the default ServiceAccount, which appears a moment after the namespace.
	wait_for 60 "default ServiceAccount" "$KBIN/kubectl" get sa default
	log "node $NODE Ready on $runtime"
}

stop() {
	local f=$1 p
	[ -f "$f" ] || return 0
	p=$(cat "$f")
	if kill -0 "$p" 2>/dev/null; then
		kill "$p"
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -0 "$p" 2>/dev/null && kill -9 "$p"
	fi
	rm -f "$f"
}

down() {
	set +e
	stop "$KWORK/k/kubelet.pid"
	[ -S "$KWORK/c/containerd.sock" ] && [ -f "$KWORK/c/containerd.pid" ] && "$CRICTL" --config "$KWORK/c/crictl.yaml" rmp -af >/dev/null 2>&1
	[ -S "$KWORK/o/crio.sock" ] && [ -f "$KWORK/o/crio.pid" ] && "$CRICTL" --config "$KWORK/o/crictl.yaml" rmp -af >/dev/null 2>&1
	local n
	for n in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$KWORK/cp/$n.pid"; done
	stop "$KWORK/c/containerd.pid"
	stop "$KWORK/o/crio.pid"
	# shims and conmons left behind name our directories in their arguments
	for p in $(ps -eo pid=,args= | awk -v w="$KWORK/" '($2 ~ /containerd-shim|conmon/) && index($0, w) {print $1}'); do kill "$p" 2>/dev/null; done
	local r id
	for r in "$KWORK/c/runc/k8s.io" "$KWORK/o/runc"; do
		[ -d "$r" ] || continue
		for id in $(runc --root "$r" list -q 2>/dev/null); do runc --root "$r" delete -f "$id" >/dev/null 2>&1; done
	done
	# mounts under $KWORK, deepest first (kubelet bind-mounts its root-dir onto itself)
	awk -v w="$KWORK/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	# kubelet's cgroups (cgroupfs driver: /kubepods in every v1 hierarchy and in unified)
	local h
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h/kubepods" ] && find "$h/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	local s=$KWORK/host-state d k v
	if [ -f "$s/sysctl" ]; then
		while read -r k _ v; do sysctl -q -w "$k=$v"; done <"$s/sysctl"
	fi
	for d in $HOSTDIRS; do
		[ -e "$s/existed$(echo "$d" | tr / _)" ] && continue
		case $d in
		/var/log/containers) find "$d" -maxdepth 1 -type l -delete 2>/dev/null; rmdir "$d" 2>/dev/null ;;
		/run/netns) [ -d "$d" ] && { mountpoint -q "$d" && umount "$d"; rmdir "$d"; } 2>/dev/null ;;
		*) rm -rf "$d" ;;
		esac
	done
	local left
	left=$(ps -eo pid=,args= | awk -v w="$KWORK/" 'index($0, w) && !/awk/ {n++} END {print n+0}')
	log "down: processes left $left, mounts left $(awk -v w="$KWORK/" 'index($2, w) == 1' /proc/mounts | wc -l), kubepods cgroups left $(ls -d /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods 2>/dev/null | wc -l)"
	true
}

case ${1:-} in
up) up "${2:?runtime: containerd or crio}" ;;
down) down ;;
*) echo "usage: cluster.sh up containerd|crio | down" >&2; exit 2 ;;
esac
