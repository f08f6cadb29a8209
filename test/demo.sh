#!/usr/bin/env bash
# The main job, end to end: a pod of two real runc containers whose config.json lists the
# resctrl-mon hook. Each container forks busy workers the moment it starts; the hook has
# already put the container's init in the pod's group, so every worker is counted. Runs on
# /sys/fs/resctrl when the host has resctrl, otherwise on the built-in simulator.
# With --prometheus, the pod keeps running while `resctrl-mon serve` exports it and a real
# Prometheus scrapes that, and the demo asks Prometheus for the pod's bandwidth, energy,
# occupancy and pressure before it deletes the containers.
# Usage: test/demo.sh BINDIR [--prometheus] (BINDIR holding resctrl-mon-hook, resctrl-mon and resctrlsim)
set -euo pipefail
bin=$(cd "${1:?usage: demo.sh BINDIR [--prometheus]}" && pwd)
prom=0
case "${2:-}" in
--prometheus) prom=1 ;;
"") ;;
*) echo "demo: unknown option $2 (want --prometheus)" >&2; exit 2 ;;
esac
# Loopback ports for serve and Prometheus in --prometheus mode.
serve_addr=127.0.0.1:${DEMO_SERVE_PORT:-19432}
prom_addr=127.0.0.1:${DEMO_PROMETHEUS_PORT:-19090}
work=$(mktemp -d /tmp/resctrl-demo.XXXXXX)
pod=5f0c3a9e-7d2b-4c1a-9e8f-0123456789ab
sandbox=$(printf 'd%.0s' $(seq 64))
runc=(runc --root "$work/runc")
simpid=
bgpids=()
cleanup() {
	for p in "${bgpids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	for c in app sidecar; do "${runc[@]}" delete -f "$c" >/dev/null 2>&1 || true; done
	if [ -n "$simpid" ]; then kill "$simpid" 2>/dev/null || true; wait "$simpid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# The simulator is opt-in (resctrlSimulator): set only when the demo mounted it.
simulator=false
if grep -qs ' /sys/fs/resctrl resctrl ' /proc/mounts; then
	root=/sys/fs/resctrl
	echo "== using the kernel's resctrl at $root"
else
	root=$work/resctrl
	mkdir -p "$root"
	"$bin/resctrlsim" mount --debug --perf-pkg-domains 1 "$root" 2>"$work/sim.log" &
	simpid=$!
	for _ in $(seq 100); do [ -e "$root/info/last_cmd_status" ] && break; sleep 0.05; done
	[ -e "$root/info/last_cmd_status" ] || { cat "$work/sim.log" >&2; exit 1; }
	simulator=true
	echo "== no resctrl on this host: the simulator is mounted at $root"
fi

cat >"$work/config.yaml" <<YAML
resctrlRoot: $root
resctrlSimulator: $simulator
stateDir: $work/state
snapshotDir: $work/snapshots
retention: 0s
log: file:$work/hook.log
YAML

# A busybox rootfs shared read-only by both containers.
mkdir -p "$work/rootfs/bin" "$work/rootfs/proc" "$work/rootfs/dev" "$work/rootfs/sys" "$work/rootfs/tmp"
cp "$(command -v busybox)" "$work/rootfs/bin/busybox"
for c in sh sleep; do ln -s busybox "$work/rootfs/bin/$c"; done

# Each container starts forking at once: four busy workers, then it waits. With Prometheus
# watching, the app keeps one worker busy so that its rates have something to show.
workload='for i in 1 2 3 4; do (n=0; while [ $n -lt 300000 ]; do n=$((n+1)); done; exec sleep 600) & done; exec sleep 600'
busy_workload='while :; do :; done & '$workload
bundle() { # name workload
	local dir=$work/$1
	mkdir -p "$dir"
	(cd "$dir" && runc spec)
	jq --arg root "$work/rootfs" --arg hook "$bin/resctrl-mon-hook" --arg cfg "$work/config.yaml" \
		--arg pod "$pod" --arg sb "$sandbox" --arg name "$1" --arg w "$2" '
		.root = {path: $root, readonly: true} |
		.process.terminal = false | .process.args = ["sh", "-c", $w] |
		.linux.cgroupsPath = "/resctrl-mon-demo/" + $name |
		.annotations = {"io.kubernetes.pod.uid": $pod, "io.kubernetes.cri-o.SandboxID": $sb,
			"io.kubernetes.cri-o.ContainerType": "container", "io.kubernetes.pod.namespace": "demo",
			"io.kubernetes.pod.name": "web", "io.kubernetes.container.name": $name} |
		.hooks = {createRuntime: [{path: $hook, args: ["resctrl-mon-hook", "--config", $cfg, "createRuntime"], timeout: 10}],
			poststop: [{path: $hook, args: ["resctrl-mon-hook", "--config", $cfg, "poststop"], timeout: 10}]}
	' "$dir/config.json" >"$dir/config.json.new"
	mv "$dir/config.json.new" "$dir/config.json"
}

group=$root/mon_groups/$pod
for c in app sidecar; do
	w=$workload
	[ "$prom" = 1 ] && [ "$c" = app ] && w=$busy_workload
	bundle "$c" "$w"
	"${runc[@]}" run -d --bundle "$work/$c" "$c" </dev/null >/dev/null
done
echo "== started two containers of pod $pod with runc; the hook said:"
sed 's/^/   /' "$work/hook.log"

sleep 2
# Every thread of every process in the containers' cgroups: the v1 pids hierarchy on hybrid
# hosts, cgroup.threads on cgroup v2 ones.
cgroup_tasks() {
	for c in app sidecar; do
		cat "/sys/fs/cgroup/pids/resctrl-mon-demo/$c/tasks" 2>/dev/null ||
			cat "/sys/fs/cgroup/resctrl-mon-demo/$c/cgroup.threads"
	done | sort -n
}
in_group=$(sort -n "$group/tasks")
in_cgroups=$(cgroup_tasks)
echo "== the containers' cgroups hold $(echo "$in_cgroups" | wc -l) tasks; the pod's group holds $(echo "$in_group" | wc -l) (RMID $(cat "$group/mon_hw_id" 2>/dev/null || echo '?'))"
[ -n "$in_cgroups" ] || { echo "demo: found no task in the containers' cgroups" >&2; exit 1; }
missing=$(comm -23 <(echo "$in_cgroups") <(echo "$in_group") | wc -l)
echo "   tasks of the pod outside its group: $missing"
echo "== the pod's counters:"
for f in "$group"/mon_data/*/*; do printf '   %-32s %s\n' "${f#$group/mon_data/}" "$(cat "$f")"; done

if [ "$prom" = 1 ]; then
	"$bin/resctrl-mon" --config "$work/config.yaml" serve --listen "$serve_addr" 2>"$work/serve.log" &
	bgpids+=($!)
	cat >"$work/prometheus.yml" <<YAML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: resctrl-mon
    static_configs: [{targets: ["$serve_addr"]}]
YAML
	prometheus --config.file "$work/prometheus.yml" --storage.tsdb.path "$work/prometheus" \
		--web.listen-address "$prom_addr" >"$work/prometheus.log" 2>&1 &
	bgpids+=($!)
	query() { promtool query instant "http://$prom_addr" "$1" 2>/dev/null; }
	for _ in $(seq 100); do query 'up{job="resctrl-mon"} == 1' | grep -q '=>' && break; sleep 0.2; done
	query 'up{job="resctrl-mon"} == 1' | grep -q '=>' || {
		echo "demo: Prometheus at $prom_addr never scraped serve at $serve_addr" >&2
		cat "$work/serve.log" "$work/prometheus.log" >&2
		exit 1
	}
	sleep 6 # a few scrapes, for rates
	echo "== resctrl-mon serve exports the pod at http://$serve_addr/metrics; a Prometheus scraping it every second at http://$prom_addr says:"
	while IFS='|' read -r what q; do
		echo "   $what: $q"
		query "$q" | sed 's/^/      /'
	done <<'QUERIES'
memory bandwidth, bytes/s|sum by (namespace, pod) (rate(resctrl_mon_mbm_total_bytes_total[5s]))
LLC occupancy, bytes|sum by (namespace, pod) (resctrl_mon_llc_occupancy_bytes)
power (AET energy), watts|sum by (namespace, pod) (rate(resctrl_mon_core_energy_joules_total[5s]))
share of time waiting for CPU (PSI some)|max by (namespace, pod, container) (rate(resctrl_mon_pressure_cpu_waiting_seconds_total[5s]))
QUERIES
fi

for c in app sidecar; do "${runc[@]}" delete -f "$c" >/dev/null; done
echo "== deleted both containers: group $( [ -e "$group" ] && echo 'still there' || echo 'removed' ), snapshots:"
ls "$work/snapshots" | sed 's/^/   /'
echo "== the .end snapshot:"
# <pod>.<life>.end: the pod had one life here.
jq -c '.readings[] | {domain, name, value, kind, unit}' "$work/snapshots/$pod".*.end | sed 's/^/   /'
[ "$missing" -eq 0 ]
