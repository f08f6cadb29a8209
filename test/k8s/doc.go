// Package k8s holds the tests of resctrl-mon on Kubernetes: the Helm chart rendered and
// checked object by object (chart_test.go), and a real one-node cluster built from the test
// cache (cluster.sh: containerd with NRI, CRI-O with hooks.d) driven only through helm and
// kubectl, as an operator would (cluster_test.go).
package k8s
