package sidecar_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// TestSidecarManifest checks the shipped example against what the sidecar needs and takes:
// a pod sharing its process namespace, the sidecar's capabilities cut to SYS_PTRACE, the
// seed's flag files where the sidecar looks for them, the probes on its routes, and a
// command line the binary accepts.
func TestSidecarManifest(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../../install/sidecar/psi-sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type container struct {
		Name    string
		Command []string
		Env     []struct{ Name, Value string }
		Ports   []struct {
			ContainerPort int `yaml:"containerPort"`
		}
		ReadinessProbe struct {
			HTTPGet struct{ Path string } `yaml:"httpGet"`
		} `yaml:"readinessProbe"`
		LivenessProbe struct {
			HTTPGet struct{ Path string } `yaml:"httpGet"`
		} `yaml:"livenessProbe"`
		SecurityContext struct {
			RunAsUser    *int `yaml:"runAsUser"`
			Capabilities struct{ Add, Drop []string }
		} `yaml:"securityContext"`
		VolumeMounts []struct {
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	var deployment struct {
		Kind string
		Spec struct {
			Template struct {
				Spec struct {
					ShareProcessNamespace bool        `yaml:"shareProcessNamespace"`
					HostPID               bool        `yaml:"hostPID"`
					Containers            []container `yaml:"containers"`
				}
			}
		}
	}
	dec := yaml.NewDecoder(f)
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var kind struct{ Kind string }
		if err := doc.Decode(&kind); err != nil {
			t.Fatal(err)
		}
		if kind.Kind == "Deployment" {
			if err := doc.Decode(&deployment); err != nil {
				t.Fatal(err)
			}
		}
	}
	pod := deployment.Spec.Template.Spec
	if !pod.ShareProcessNamespace || pod.HostPID {
		t.Errorf("shareProcessNamespace %v, hostPID %v", pod.ShareProcessNamespace, pod.HostPID)
	}
	i := slices.IndexFunc(pod.Containers, func(c container) bool { return slices.Contains(c.Command, "sidecar") })
	if i < 0 || len(pod.Containers) != 2 {
		t.Fatalf("no sidecar among %d containers", len(pod.Containers))
	}
	sc, target := pod.Containers[i], pod.Containers[1-i]
	caps := sc.SecurityContext.Capabilities
	if !slices.Equal(caps.Drop, []string{"ALL"}) || !slices.Equal(caps.Add, []string{"SYS_PTRACE"}) || sc.SecurityContext.RunAsUser == nil || *sc.SecurityContext.RunAsUser != 0 {
		t.Errorf("sidecar security context: %+v", sc.SecurityContext)
	}
	if len(sc.Env) != 1 || sc.Env[0].Name != "PORT" || len(sc.Ports) != 1 || sc.Env[0].Value != strconv.Itoa(sc.Ports[0].ContainerPort) {
		t.Errorf("PORT %+v and container port %+v differ", sc.Env, sc.Ports)
	}
	if sc.ReadinessProbe.HTTPGet.Path != "/healthz" || sc.LivenessProbe.HTTPGet.Path != "/health" {
		t.Errorf("probes: readiness %q, liveness %q", sc.ReadinessProbe.HTTPGet.Path, sc.LivenessProbe.HTTPGet.Path)
	}
	// The ConfigMap volume (a directory holding pid_flag) where the defaults look.
	if len(sc.VolumeMounts) != 1 || sc.VolumeMounts[0].MountPath != "/etc/pid_flag_sc" ||
		len(target.VolumeMounts) != 1 || target.VolumeMounts[0].MountPath != "/etc/pid_flag" {
		t.Errorf("flag mounts: sidecar %+v, target %+v", sc.VolumeMounts, target.VolumeMounts)
	}

	// The binary takes the command line: it gets as far as the flag file, absent here.
	e2e.BuildBinaries(t)
	cmd := exec.Command(e2e.Binaries.CLI, append(sc.Command[1:], "--flag-file", "/nonexistent/pid_flag")...)
	cmd.Env = append(os.Environ(), "PORT="+sc.Env[0].Value)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "flag file: open /nonexistent/pid_flag") {
		t.Errorf("%v: %v: %s", sc.Command, err, stderr.String())
	}
}
