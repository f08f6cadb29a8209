// Package release tests what `make release` and `make push` ship: one version everywhere
// (the VERSION file, the chart, the binaries, the image, the file names), the licenses of
// every module linked into the binaries and of nothing else, checksums that verify, and a
// push to a real registry (test/registrytest) that skopeo and helm read back. The tests are
// in _test files; this file only holds the package's documentation.
package release
