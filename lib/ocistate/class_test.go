package ocistate

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// TestClass: the class each setting of linux.intelRdt puts a container in, as runc and crun
// decide it (the source each case was read in is named).
func TestClass(t *testing.T) {
	t.Parallel()
	const id = "c1"
	for _, tc := range []struct {
		name string
		rdt  *specs.LinuxIntelRdt
		want string
		from string
	}{
		{"no intelRdt", nil, "",
			"runc NewManager: nil without config.IntelRdt; crun libcrun_apply_intelrdt returns at once"},
		{"closID", &specs.LinuxIntelRdt{ClosID: "gold"}, "gold",
			"runc getIntelRdtPath / NewManager: clos = ClosID; crun libcrun_get_intelrdt_name"},
		{"closID and schemata", &specs.LinuxIntelRdt{ClosID: "gold", L3CacheSchema: "L3:0=f", MemBwSchema: "MB:0=50"}, "gold",
			"runc Apply makes the class if missing; crun resctl_create"},
		{"closID and enableMonitoring", &specs.LinuxIntelRdt{ClosID: "gold", EnableMonitoring: true}, "gold",
			"runc ≥ 1.4 GetMonPath: <class>/mon_groups/<id>; crun ≥ 1.24 resctl_create_monitoring_group"},
		{"empty object", &specs.LinuxIntelRdt{}, id,
			"runc: clos := id when ClosID is empty; crun: clos_id NULL → ctr_name"},
		{"only enableMonitoring", &specs.LinuxIntelRdt{EnableMonitoring: true}, id,
			"runc ≥ 1.4 and crun ≥ 1.24 make the class <id> and <id>/mon_groups/<id>; runc 1.1–1.3 drop the field, class <id>"},
		{"only schemata", &specs.LinuxIntelRdt{Schemata: []string{"L3:0=ff"}}, id,
			"runc ≥ 1.3 (configs.IntelRdt.Schemata) and crun: class <id> with that schemata"},
		{"only l3CacheSchema", &specs.LinuxIntelRdt{L3CacheSchema: "L3:0=f"}, id, "runc 1.1 Apply: MkdirAll(<root>/<id>)"},
		{"only memBwSchema", &specs.LinuxIntelRdt{MemBwSchema: "MB:0=50"}, id, "as l3CacheSchema"},
		{"root by name", &specs.LinuxIntelRdt{ClosID: "/", EnableMonitoring: true}, "",
			"runtime-spec 1.3: \"/\" is the default CLOS; runc ≥ 1.4 validator allows it, securejoin → the root; crun ≥ 1.25 is_default_clos"},
		{"root by name, schemata", &specs.LinuxIntelRdt{ClosID: "/", Schemata: []string{"L3:0=ff"}}, "",
			"crun ≥ 1.25 resctl_create: the default clos is never made"},
	} {
		if got := Class(tc.rdt, id); got != tc.want {
			t.Errorf("%s: class %q, want %q (%s)", tc.name, got, tc.want, tc.from)
		}
	}
}

func TestIntelRdt(t *testing.T) {
	t.Parallel()
	rdt := &specs.LinuxIntelRdt{ClosID: "gold"}
	for _, tc := range []struct {
		s    *specs.Spec
		want *specs.LinuxIntelRdt
	}{
		{nil, nil},
		{&specs.Spec{}, nil},
		{&specs.Spec{Linux: &specs.Linux{}}, nil},
		{&specs.Spec{Linux: &specs.Linux{IntelRdt: rdt}}, rdt},
	} {
		if got := IntelRdt(tc.s); got != tc.want {
			t.Errorf("IntelRdt(%+v) = %+v, want %+v", tc.s, got, tc.want)
		}
	}
}
