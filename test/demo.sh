#!/usr/bin/env bash
# The demo on the resctrl simulator: a pod's group, a workload that forks, and the difference
# between placing the workload before its first fork and after it (the fork race), with the
# counters that follow. Usage: test/demo.sh path/to/resctrlsim
set -euo pipefail
sim=${1:?usage: demo.sh path/to/resctrlsim}
dir=$(mktemp -d /tmp/resctrl-demo.XXXXXX)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rmdir "$dir" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

"$sim" mount --debug --perf-pkg-domains 1 "$dir" 2>"$work/sim.log" &
pids+=($!)
for _ in $(seq 100); do [ -e "$dir/info/last_cmd_status" ] && break; sleep 0.05; done
[ -e "$dir/info/last_cmd_status" ] || { cat "$work/sim.log" >&2; exit 1; }
echo "== resctrl simulator mounted on $dir"
echo "num_rmids: $(cat "$dir/info/L3_MON/num_rmids")  features: $(tr '\n' ' ' <"$dir/info/L3_MON/mon_features")"

early=$dir/mon_groups/11111111-2222-3333-4444-555555555555
late=$dir/mon_groups/66666666-7777-8888-9999-000000000000
mkdir "$early" "$late"
echo "== made two pod groups (RMIDs $(cat "$early/mon_hw_id") and $(cat "$late/mon_hw_id"))"

# A workload that, as soon as it is released, forks four busy workers.
script='while [ ! -e "$0" ]; do sleep 0.01; done
	for i in 1 2 3 4; do (n=0; while [ $n -lt 200000 ]; do n=$((n+1)); done; exec sleep 30) & done; wait'

# Early: the workload is placed while still held, before its first fork (what the hook does).
sh -c "$script" "$work/gate1" & p1=$!; pids+=($p1)
echo "$p1" >"$early/tasks"
touch "$work/gate1"
# Late: placed after it started forking (what a daemon that notices containers does).
sh -c "$script" "$work/gate2" & p2=$!; pids+=($p2)
touch "$work/gate2"; sleep 0.3
echo "$p2" >"$late/tasks"

sleep 2
count() { pgrep -P "$1" | wc -l; }
echo "== placed before the first fork: $(wc -l <"$early/tasks") tasks in the group (the workload and its $(count "$p1") workers)"
echo "== placed after it started:     $(wc -l <"$late/tasks") task in the group, $(count "$p2") workers left out"
for g in "$early" "$late"; do
	echo "-- $(basename "$g"): mbm_total_bytes $(cat "$g/mon_data/mon_L3_00/mbm_total_bytes")," \
		"llc_occupancy $(cat "$g/mon_data/mon_L3_00/llc_occupancy")," \
		"core_energy $(cat "$g/mon_data/mon_PERF_PKG_00/core_energy") J"
done
echo "== the OCI hooks that place containers before their first fork come next; this demo will then run a real runc container through them"
