package podevents

import (
	"fmt"

	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
)

// ValidPod checks a record's pod before it goes into a URL and an Event's name: the record
// holds what the runtime's annotations said, which a pod's author can reach, so a namespace
// must be a DNS label, a name a DNS subdomain, and a UID what the API server generates (hex
// digits and dashes).
func ValidPod(p kubeapi.PodRef) error {
	if !dnsLabel(p.Namespace) {
		return fmt.Errorf("namespace %.80q is not a DNS label", p.Namespace)
	}
	if !dnsSubdomain(p.Name) {
		return fmt.Errorf("pod name %.80q is not a DNS subdomain", p.Name)
	}
	if !uid(p.UID) {
		return fmt.Errorf("pod UID %.80q is not a UID", p.UID)
	}
	return nil
}

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// dnsLabel: RFC 1123, as Kubernetes checks a namespace: at most 63 of a-z, 0-9 and '-',
// alphanumeric at both ends.
func dnsLabel(s string) bool {
	if s == "" || len(s) > 63 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := range len(s) {
		if !alnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// dnsSubdomain: RFC 1123, as Kubernetes checks a pod's name: at most 253, labels joined by
// dots (each label here may be longer than 63, as Kubernetes allows).
func dnsSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			part := s[start:i]
			if part == "" || !alnum(part[0]) || !alnum(part[len(part)-1]) {
				return false
			}
			start = i + 1
			continue
		}
		if !alnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// uid: a UUID as the API server writes it, lower or upper case; at most 64 characters of hex
// digits and dashes, so a static pod's UID (a hash kubelet writes) passes too.
func uid(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !hexDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

func hexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
