package registrytest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStart: two registries at once on loopback, each on its own port; a blob pushed through
// the distribution API lands in the registry's Dir and is served back; at cleanup the
// registry is gone from its port.
func TestStart(t *testing.T) {
	t.Parallel()
	var addrs []string
	t.Run("serve", func(t *testing.T) {
		a, b := Start(t), Start(t)
		addrs = []string{a.Addr, b.Addr}
		if a.Addr == b.Addr || !strings.HasPrefix(a.Addr, "127.0.0.1:") {
			t.Fatalf("addresses %s and %s: want two loopback ports", a.Addr, b.Addr)
		}
		blob := []byte("registrytest " + a.Addr)
		sum := sha256.Sum256(blob)
		digest := "sha256:" + hex.EncodeToString(sum[:])
		// An upload: POST opens it, PUT to its Location with the digest puts the content.
		resp, err := http.Post(a.URL()+"/v2/test/blob/blobs/uploads/", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if resp.StatusCode != http.StatusAccepted || err != nil {
			t.Fatalf("open an upload: %s, Location %v\n%s", resp.Status, err, a.Log())
		}
		q := loc.Query()
		q.Set("digest", digest)
		loc.RawQuery = q.Encode()
		req, err := http.NewRequest(http.MethodPut, loc.String(), bytes.NewReader(blob))
		if err != nil {
			t.Fatal(err)
		}
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("upload: %s\n%s", resp.Status, a.Log())
		}
		resp, err = http.Get(a.URL() + "/v2/test/blob/blobs/" + digest)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, blob) {
			t.Errorf("GET the blob: %s %q, %v; want %q", resp.Status, got, err, blob)
		}
		var stored []string
		_ = filepath.WalkDir(a.Dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == "data" && strings.Contains(p, hex.EncodeToString(sum[:])) {
				stored = append(stored, p)
			}
			return nil
		})
		if len(stored) != 1 {
			t.Errorf("the blob in %s: %q, want one data file", a.Dir, stored)
		}
		// The other registry has its own storage.
		resp, err = http.Get(b.URL() + "/v2/test/blob/blobs/" + digest)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("the second registry has the first one's blob: %s", resp.Status)
		}
	})
	for _, addr := range addrs {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Errorf("%s still answers after cleanup", addr)
		}
	}
}

func TestRegistryEnv(t *testing.T) {
	t.Parallel()
	got := registryEnv([]string{"PATH=/bin", "REGISTRY_HTTP_ADDR=:5000", "HOME=/root", "REGISTRY=x"})
	if want := []string{"PATH=/bin", "HOME=/root", "REGISTRY=x"}; !slices.Equal(got, want) {
		t.Errorf("registryEnv: %q, want %q", got, want)
	}
}
