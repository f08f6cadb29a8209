#!/bin/sh
# mktrees.sh writes the hand-made fixture trees (testdata/l3, aet, mbm-event, snc) as the
# kernel documents their layouts (Documentation/filesystems/resctrl.rst): run it in testdata/.
# testdata/sim is the simulator's, written by go test -run TestSimTree -update.
set -eu
A=6a1f3c2e-0000-4000-8000-00000000000a
B=6a1f3c2e-0000-4000-8000-00000000000b
F=f00dcafe00000000000000000000000000000000000000000000000000000001
FAKE=../../../../../resctrlfake/testdata   # from <tree>/mon_groups/<group>/
w() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" > "$1"; }
common() { # tree, num_rmids, mon_features...
  t=$1; n=$2; shift 2
  w $t/info/last_cmd_status ok
  w $t/info/L3_MON/num_rmids $n
  printf '%s\n' "$@" > $t/info/L3_MON/mon_features
  w $t/info/L3_MON/max_threshold_occupancy 90112
  w $t/tasks "1"
  # runc's own group for a container (runtime-spec enableMonitoring): not ours.
  w $t/mon_groups/$F/tasks ""
  # a control group (class) with one of our pods' groups
  w $t/gold/tasks ""
  w $t/gold/schemata "L3:0=ff;1=ff"
  # our pod's group: pid 1 always runs, 999999999 is past pid_max.
  w $t/mon_groups/$A/tasks "$(printf '1\n999999999')"
  w $t/gold/mon_groups/$B/tasks ""
}
l3files() { # dir occ total local
  w $1/llc_occupancy $2; w $1/mbm_total_bytes $3; w $1/mbm_local_bytes $4
}
rm -rf l3 aet mbm-event snc
# l3: Intel RDT, two L3 domains; the pod's group is resctrlfake's l3 tree.
common l3 256 llc_occupancy mbm_total_bytes mbm_local_bytes
l3files l3/mon_data/mon_L3_00 4194304 987654321 876543210
l3files l3/mon_data/mon_L3_01 2097152 87654321 76543210
ln -s $FAKE/l3/mon_data l3/mon_groups/$A/mon_data
l3files l3/mon_groups/$F/mon_data/mon_L3_00 0 100 50
l3files l3/mon_groups/$F/mon_data/mon_L3_01 0 100 50
l3files l3/gold/mon_data/mon_L3_00 0 0 0
l3files l3/gold/mon_data/mon_L3_01 0 0 0
l3files l3/gold/mon_groups/$B/mon_data/mon_L3_00 65536 4096 4096
l3files l3/gold/mon_groups/$B/mon_data/mon_L3_01 Error 8192 0

# aet: L3 beside Intel AET's PERF_PKG (Linux >= 7.0); groups bounded by the smaller num_rmids.
common aet 256 llc_occupancy mbm_total_bytes
w aet/info/PERF_PKG_MON/num_rmids 64
printf 'core_energy\nactivity\n' > aet/info/PERF_PKG_MON/mon_features
for g in aet aet/gold aet/mon_groups/$F; do
  w $g/mon_data/mon_L3_00/llc_occupancy 1048576; w $g/mon_data/mon_L3_00/mbm_total_bytes 5000000
  w $g/mon_data/mon_PERF_PKG_00/core_energy 5000.500000; w $g/mon_data/mon_PERF_PKG_00/activity 1000000.250000
done
ln -s $FAKE/aet/mon_data aet/mon_groups/$A/mon_data
w aet/gold/mon_groups/$B/mon_data/mon_L3_00/llc_occupancy 0
w aet/gold/mon_groups/$B/mon_data/mon_L3_00/mbm_total_bytes 0
w aet/gold/mon_groups/$B/mon_data/mon_PERF_PKG_00/core_energy 0.000000
w aet/gold/mon_groups/$B/mon_data/mon_PERF_PKG_00/activity Unavailable

# mbm-event: AMD ABMC (Linux >= 6.18) in mbm_event mode; the pod's group and the mode are
# resctrlfake's mbm-event tree.
common mbm-event 256 llc_occupancy mbm_total_bytes mbm_local_bytes
for f in mbm_assign_mode num_mbm_cntrs available_mbm_cntrs; do
  ln -s $FAKE/mbm-event/info/L3_MON/$f mbm-event/info/L3_MON/$f
done
w mbm-event/info/L3_MON/mbm_assign_on_mkdir 1
w mbm-event/info/L3_MON/event_configs/mbm_total_bytes/event_filter "local_reads,remote_reads,local_non_temporal_writes,remote_non_temporal_writes,local_reads_slow_memory,remote_reads_slow_memory,dirty_victim_writes_all"
w mbm-event/info/L3_MON/event_configs/mbm_local_bytes/event_filter "local_reads,local_non_temporal_writes,local_reads_slow_memory"
ln -s $FAKE/mbm-event/mon_data mbm-event/mon_groups/$A/mon_data
ln -s $FAKE/mbm-event/mbm_L3_assignments mbm-event/mon_groups/$A/mbm_L3_assignments
for g in mbm-event mbm-event/gold mbm-event/mon_groups/$F; do
  l3files $g/mon_data/mon_L3_00 0 Unassigned Unassigned
  l3files $g/mon_data/mon_L3_01 0 Unassigned Unassigned
done
w mbm-event/mon_groups/$F/mbm_L3_assignments "$(printf 'mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=_;1=_')"
w mbm-event/gold/mbm_L3_assignments "$(printf 'mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=_;1=_')"
w mbm-event/gold/mon_groups/$B/mbm_L3_assignments "$(printf 'mbm_total_bytes:0=_;1=e\nmbm_local_bytes:0=_;1=_')"
l3files mbm-event/gold/mon_groups/$B/mon_data/mon_L3_00 8192 Unassigned Unassigned
l3files mbm-event/gold/mon_groups/$B/mon_data/mon_L3_01 16384 2048 Unassigned

# snc: Intel Sub-NUMA Cluster (Linux >= 6.11), two nodes per L3 cache: each mon_L3_XX holds
# the sums and mon_sub_L3_YY per node (cache XX holds nodes 2XX and 2XX+1); num_rmids is the
# hardware's divided by the SNC ways.
common snc 128 llc_occupancy mbm_total_bytes mbm_local_bytes
snc() { # group dir, base
  b=$2
  for d in 0 1; do
    n0=$((2*d)); n1=$((2*d+1))
    dom=$1/mon_data/mon_L3_0$d
    l3files $dom/mon_sub_L3_0$n0 $((b*1000+d*10+1)) $((b*100000+d*10+1)) $((b*50000+d*10+1))
    l3files $dom/mon_sub_L3_0$n1 $((b*1000+d*10+2)) $((b*100000+d*10+2)) $((b*50000+d*10+2))
    l3files $dom $((2*b*1000+2*d*10+3)) $((2*b*100000+2*d*10+3)) $((2*b*50000+2*d*10+3))
  done
}
snc snc 9; snc snc/gold 0; snc snc/mon_groups/$F 1; snc snc/mon_groups/$A 3; snc snc/gold/mon_groups/$B 2

# cgroup: a cgroup2 hierarchy's pressure files (PSI) for the pods' cgroups the records name.
rm -rf cgroup
psi() { # dir, base: cpu, memory and io pressure, some and full
  for r in cpu memory io; do
    case $r in cpu) k=1 ;; memory) k=2 ;; io) k=3 ;; esac
    mkdir -p "$1"
    printf 'some avg10=1.50 avg60=0.75 avg300=0.25 total=%s\nfull avg10=0.50 avg60=0.25 avg300=0.10 total=%s\n' \
      $(($2*1000000+k*1000)) $(($2*100000+k*100)) > "$1/$r.pressure"
  done
}
psi cgroup/kubepods.slice/kubepods-poda.slice 1
psi cgroup/kubepods.slice/kubepods-poda.slice/cri-containerd-a1.scope 2
psi cgroup/kubepods.slice/kubepods-podc.slice/cri-containerd-c1.scope 3
