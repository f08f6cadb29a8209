# resctrl-mon. `make demo` and `make test` install what they need (test/deps.sh, as root).

# Where `make install` puts things (docs/install/make-install.md lists them). Every file goes under
# DESTDIR, and under PREFIX unless one of these variables names another place. PREFIX
# /usr/local (the default) and /usr are the system's own: the config goes to /etc and the
# hooks.d JSON to the directory CRI-O and podman read by default. Any other PREFIX is a
# self-contained tree: everything stays inside it.
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/oci/hooks.d
# systemd loads units from /usr/local/lib/systemd/system and /usr/lib/systemd/system too;
# /etc/systemd/system is the admin's place to override them.
UNITDIR    ?= $(PREFIX)/lib/systemd/system
DOCDIR     ?= $(PREFIX)/share/doc/resctrl-mon
ifneq ($(filter /usr /usr/local,$(patsubst %/,%,$(PREFIX))),)
SYSCONFDIR ?= /etc
# CRI-O's default hooks_dir (podman's too); /etc/containers/oci/hooks.d is the admin's
# override directory, whose files mask those of the same name here.
HOOKSDIR   ?= /usr/share/containers/oci/hooks.d
else
SYSCONFDIR ?= $(PREFIX)/etc
HOOKSDIR   ?= $(PREFIX)/share/containers/oci/hooks.d
endif
CONFDIR    ?= $(SYSCONFDIR)/resctrl-mon
# The runtime kills a hook after the hooks.d "timeout" (whole seconds); the hook is given two
# seconds less as its --hookBudget, so that it ends, and applies its failure policy, first.
HOOK_TIMEOUT ?= 10

GO        ?= go
GOBIN     := $(shell $(GO) env GOPATH)/bin
GOLANGCI  := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
BIN       := bin
# urfave/cli's man-page support pulls in a markdown library whose init runs on every call of
# the hook (its cost: docs/benchmarks.md); the binaries do not need it. No go test needs the
# tag: the binaries the tests run are built with it by the tests (test/e2e/binaries.go).
TAGS      := -tags urfave_cli_no_docs
# The version the binaries (`resctrl-mon --version`), the image (its tag and
# org.opencontainers.image.version), the chart and the release's file names carry: the
# VERSION file, the one place it is kept (test/release fails when Chart.yaml's version or
# appVersion disagrees), unless given (`make image VERSION=test1`).
ifeq ($(origin VERSION),undefined)
VERSION := $(strip $(file <VERSION))
endif
REVISION := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# The binaries look for the config where this install puts it (/etc/resctrl-mon/config.yaml
# unless CONFDIR, SYSCONFDIR or PREFIX say otherwise).
# The runtime wrapper lists the hook where this install puts it (config key runtimeHook).
GOLDFLAGS := -ldflags '-X github.com/resctrl-mon/resctrl-mon/lib/config.Version=$(VERSION) \
  -X github.com/resctrl-mon/resctrl-mon/lib/config.DefaultPath=$(CONFDIR)/config.yaml \
  -X github.com/resctrl-mon/resctrl-mon/lib/config.DefaultHookPath=$(LIBEXECDIR)/resctrl-mon-hook'

# Every binary is static: the image is FROM scratch (no libc), and in hooks mode the hook and
# the CLI run on the host, whatever its libc. Nothing here needs cgo: the pure-Go resolver and
# os/user do, and runc's libcontainer (for its State type) builds without its cgo file.
STATIC    := CGO_ENABLED=0

export PATH := /usr/local/go/bin:$(GOBIN):$(PATH)

.PHONY: all build image licenses release push version test test-unprivileged fuzz bench lint demo demo-prometheus install install-check uninstall clean deps runtimes docs

all: build

deps:
	@bash test/deps.sh

# CRI-O, containerd and crictl for the end-to-end tests, built from the Go module proxy into
# /var/cache/resctrl-mon-test (RESCTRLMON_TEST_CACHE) once, nothing when they are there (how
# long the first build takes: test/README.md). The tests never build them (go test would
# time out). The one-node Kubernetes of test/k8s (kubelet, control plane, kubectl, etcd,
# helm, CNI's loopback, and a Prometheus with Kubernetes service discovery, which Debian's
# lacks), runc 1.5.1 and the Prometheus Operator come the same way.
runtimes: deps
	@for r in crictl crio containerd runc helm cni etcd kubernetes prometheus prometheus-operator; do bash test/runtimes/$$r.sh >/dev/null || exit 1; done

build:
	$(STATIC) $(GO) build $(TAGS) ./...
	$(STATIC) $(GO) build $(TAGS) -o $(BIN)/resctrlsim ./test/resctrlsim/cmd/resctrlsim
	$(STATIC) $(GO) build $(TAGS) $(GOLDFLAGS) -o $(BIN)/resctrl-mon-hook ./hooks/resctrl-mon-hook
	$(STATIC) $(GO) build $(TAGS) $(GOLDFLAGS) -o $(BIN)/resctrl-mon ./cmd/resctrl-mon
	$(STATIC) $(GO) build $(TAGS) $(GOLDFLAGS) -o $(BIN)/resctrl-mon-nri ./nri-adapter/resctrl-mon-nri
	$(STATIC) $(GO) build $(TAGS) $(GOLDFLAGS) -o $(BIN)/resctrl-mon-runtime ./install/resctrl-mon-runtime

# The OCI image, built offline from the binaries above (install/image/build.sh: FROM scratch,
# the four static binaries in /usr/local/bin, the default config and /licenses), as an OCI
# archive named localhost/resctrl-mon:$(VERSION) for `ctr -n k8s.io images import` or
# `podman load`.
IMAGE        := $(BIN)/resctrl-mon-image.oci.tar
IMAGE_SOURCE := https://github.com/resctrl-mon/resctrl-mon
image: build licenses
	bash install/image/build.sh $(BIN) '$(VERSION)' '$(REVISION)' '$(IMAGE_SOURCE)' $(IMAGE) $(LICENSES)

# The packages of the four shipped binaries, and where `make licenses` writes the license files
# of every module they link (cmd/licenses, from `go list -deps` with the build's tags and
# CGO_ENABLED=0; a module without a license file fails by name). The image has them in
# /licenses, the release tarball in licenses/.
SHIPPED  := ./hooks/resctrl-mon-hook ./nri-adapter/resctrl-mon-nri ./cmd/resctrl-mon ./install/resctrl-mon-runtime
LICENSES ?= $(BIN)/licenses
licenses:
	$(STATIC) $(GO) run $(TAGS) ./cmd/licenses $(TAGS) -o $(LICENSES) $(SHIPPED)

# `make -s version` prints the version this make would build and release.
version:
	@echo '$(VERSION)'

# A release in $(DIST) (install/release/release.sh): the binaries, LICENSE, CHANGELOG.md and
# the licenses as resctrl-mon-$(VERSION)-linux-<arch>.tar.gz, the image as
# resctrl-mon-$(VERSION).oci.tar, the chart packaged with version and appVersion
# $(VERSION) as resctrl-mon-$(VERSION).tgz, and SHA256SUMS over the three. HELM is helm
# on PATH, else the one `make runtimes` builds.
DIST ?= dist
HELM ?= $(or $(shell command -v helm 2>/dev/null),$(shell bash test/runtimes/helm.sh --print 2>/dev/null)/helm)
release: build licenses
	bash install/release/release.sh '$(VERSION)' '$(REVISION)' '$(IMAGE_SOURCE)' '$(BIN)' '$(LICENSES)' '$(DIST)' '$(HELM)'

# Pushes the release in $(DIST) (make release first) to a registry: the image to
# $(REGISTRY)/[$(REPOSITORY)/]resctrl-mon:$(VERSION) with skopeo, the chart to
# oci://$(REGISTRY)/[$(REPOSITORY)/]charts with helm push. Plain HTTP, without TLS, only for a
# loopback REGISTRY or INSECURE=1 (install/release/push.sh).
REGISTRY   ?=
REPOSITORY ?=
INSECURE   ?= 0
push:
	bash install/release/push.sh '$(REGISTRY)' '$(REPOSITORY)' '$(INSECURE)' '$(VERSION)' '$(DIST)' '$(HELM)'

# Every test, the simulator's included. They need root, /dev/fuse and the runtimes; without
# them most would skip and still print "ok", so test/preflight.sh (which also installs the
# dependencies, as root) stops first, saying what is missing, and the tests run with
# RESCTRLSIM_REQUIRE=1: a skip nobody foresaw fails too. PARTIAL=1 runs what can run: the
# preflight lists what will skip, and skips pass.
# The end-to-end tests run without -race: they drive external binaries, and a race-built
# simulator in the test process would be 5-10x slower under fifty concurrent containers
# (the simulator itself is race-tested by its own package).
# test/e2e is one package per front end over one harness; -p 1 runs them one after another,
# as the single package ran before: each package's tests already run in parallel, and two
# packages at once on a 2-core machine would run twice the daemons and containers against
# the same budgets (the hook's and the adapter's deadlines). The binaries they run are built
# once per source tree (e2e.BuildBinaries), not once per package.
PARTIAL ?= 0
REQUIRE := $(if $(filter 1,$(PARTIAL)),0,1)
# The real CRI-O, containerd and crictl are built (once, cached) after the preflight, so a host
# that cannot run the suite says so before minutes of building.
# As root, the library and both front ends are tested once more as a user without privileges
# (test-unprivileged): what needs root must skip there, saying why, not fail. Run as anyone
# else, the first go test below is that run already.
test:
	@PARTIAL=$(PARTIAL) bash test/preflight.sh
	@if [ "$(PARTIAL)" != 1 ]; then $(MAKE) --no-print-directory runtimes; fi
	RESCTRLSIM_REQUIRE=$(REQUIRE) $(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /test/e2e -e /test/k8s)
	@if [ "$$(id -u)" = 0 ]; then GO=$(GO) bash test/unprivileged.sh; fi
	RESCTRLSIM_REQUIRE=$(REQUIRE) $(GO) test -count=1 -p 1 -timeout 30m ./test/e2e/...
	RESCTRLSIM_REQUIRE=$(REQUIRE) $(GO) test -count=1 -timeout 40m ./test/k8s/...
	@if [ "$(PARTIAL)" = 1 ]; then echo "make test: PARTIAL=1: the suites listed at the start skipped; this was not a full run" >&2; fi

# go test ./lib/... ./hooks/... ./nri-adapter/... as an unprivileged user (nobody, when run as
# root, on a copy of the tree it can read; else as the caller): every package passes, and what
# needs root skips saying why (test/README.md).
test-unprivileged:
	@GO=$(GO) bash test/unprivileged.sh

# A short run of every fuzz target (the corpus seeds always run in `make test`).
FUZZTIME ?= 15s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run XXX -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Benchmarks print ratios against a baseline measured in the same run. The pod-start one
# needs the real containerd and crictl (built once, cached).
# The peer NRI plugin only the benchmarks run (BenchmarkAdapterVsPeer): not in runtimes.
bench: runtimes
	bash test/runtimes/nri-resctrl-mon.sh >/dev/null
	$(GO) test $(TAGS) -run XXX -bench . -benchtime 2000x ./test/resctrlsim/
	$(GO) test $(TAGS) -run XXX -bench Hook -benchtime 200x ./test/e2e/bench/
	$(GO) test $(TAGS) -run XXX -bench ContainerStart -benchtime 30x ./test/e2e/bench/
	$(GO) test $(TAGS) -run XXX -bench Wrapper -benchtime 30x ./test/e2e/bench/
	$(GO) test $(TAGS) -run XXX -bench PodStartNRI -benchtime 30x ./test/e2e/bench/
	$(GO) test $(TAGS) -run XXX -bench AdapterVsPeer -benchtime 30x ./test/e2e/bench/
	$(GO) test $(TAGS) -run XXX -bench . -benchtime 300x ./lib/wrapper/
	$(GO) test $(TAGS) -run XXX -bench Reconcile -benchtime 3x ./lib/lifecycle/
	$(GO) test $(TAGS) -run XXX -bench JoinLifecycle -benchtime 300x ./lib/lifecycle/
	$(GO) test $(TAGS) -run XXX -bench . -benchtime 200x ./lib/registry/
	$(GO) test $(TAGS) -run XXX -bench 'Scrape|ServeMemory' -benchtime 5x ./lib/exporter/
	$(GO) test $(TAGS) -run XXX -bench Collect -benchtime 50x ./lib/exporter/
	$(GO) test $(TAGS) -run XXX -bench . -benchtime 300x ./nri-adapter/nriplugin/

# The reference pages and the chart's README (install/helm/resctrl-mon/README.md) made from the
# code (docs/reference/{config,metrics,actions,cli}.md);
# cmd/docgen's TestPagesAreCurrent fails when they are not what this writes.
docs:
	$(GO) run $(TAGS) ./cmd/docgen

lint:
	@command -v golangci-lint >/dev/null 2>&1 || $(GO) install $(GOLANGCI)
	golangci-lint run ./...

demo: deps build
	bash test/demo.sh $(BIN)

# The demo's pod exported by resctrl-mon serve and scraped by a real Prometheus on loopback.
demo-prometheus: deps build
	bash test/demo.sh $(BIN) --prometheus

# The binaries first and the hooks.d JSON last: a JSON whose path does not exist when the
# runtime loads it is dropped. The hook and its JSON are put there by `resctrl-mon host
# install`, the Helm chart's hooks-mode installer, so the JSON has one generator (lib/hooksd);
# it records them in $(CONFDIR)/host-install.json, and --adopt takes over what an older
# `make install` left. The test simulator (bin/resctrlsim) is not installed. The config is
# installed once: after that it is the admin's.
install: install-check build
	install -D -m 0755 $(BIN)/resctrl-mon $(DESTDIR)$(BINDIR)/resctrl-mon
	install -D -m 0755 $(BIN)/resctrl-mon-runtime $(DESTDIR)$(BINDIR)/resctrl-mon-runtime
	install -D -m 0755 $(BIN)/resctrl-mon-nri $(DESTDIR)$(BINDIR)/resctrl-mon-nri
	install -D -m 0755 install/kubectl/kubectl-resctrl_mon $(DESTDIR)$(BINDIR)/kubectl-resctrl_mon
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -D -m 0644 test/README.md $(DESTDIR)$(DOCDIR)/test/README.md
	install -D -m 0644 install/helm/resctrl-mon/README.md $(DESTDIR)$(DOCDIR)/install/helm/resctrl-mon/README.md
	for f in $$(cd docs && find . -name '*.md' | sort); do \
	  install -D -m 0644 docs/$$f $(DESTDIR)$(DOCDIR)/docs/$$f || exit 1; \
	done
	install -D -m 0644 install/nri/containerd-nri.toml $(DESTDIR)$(DOCDIR)/examples/containerd-nri.toml
	install -D -m 0644 install/nri/crio-nri.conf $(DESTDIR)$(DOCDIR)/examples/crio-nri.conf
	test -e $(DESTDIR)$(CONFDIR)/config.yaml || install -D -m 0644 install/config.yaml $(DESTDIR)$(CONFDIR)/config.yaml
	sed 's|@BINDIR@|$(BINDIR)|g; s|@DOCDIR@|$(DOCDIR)|g' install/systemd/resctrl-mon-reconcile.service.in \
	  | install -D -m 0644 /dev/stdin $(DESTDIR)$(UNITDIR)/resctrl-mon-reconcile.service
	install -D -m 0644 install/systemd/resctrl-mon-reconcile.timer $(DESTDIR)$(UNITDIR)/resctrl-mon-reconcile.timer
	sed 's|@BINDIR@|$(BINDIR)|g; s|@DOCDIR@|$(DOCDIR)|g; s|@CONFDIR@|$(CONFDIR)|g' install/systemd/resctrl-mon-serve.service.in \
	  | install -D -m 0644 /dev/stdin $(DESTDIR)$(UNITDIR)/resctrl-mon-serve.service
	sed 's|@BINDIR@|$(BINDIR)|g; s|@DOCDIR@|$(DOCDIR)|g; s|@CONFDIR@|$(CONFDIR)|g' install/systemd/resctrl-mon-nri.service.in \
	  | install -D -m 0644 /dev/stdin $(DESTDIR)$(UNITDIR)/resctrl-mon-nri.service
	$(BIN)/resctrl-mon host install --adopt --host-root '$(or $(DESTDIR),/)' --hook-source $(BIN)/resctrl-mon-hook \
	  --hook-path '$(LIBEXECDIR)/resctrl-mon-hook' --hooks-dir '$(HOOKSDIR)' --config-path '$(CONFDIR)/config.yaml' \
	  --timeout '$(HOOK_TIMEOUT)'

# Refused before anything is built or installed. A JSON number has no leading zero; the hook's
# budget (HOOK_TIMEOUT - 2 s) must be at least 1 s and at most hookBudget's 1h.
install-check:
	@case '$(HOOK_TIMEOUT)' in ''|0*|*[!0-9]*) t=bad;; *) t=$(HOOK_TIMEOUT);; esac; \
	if [ "$$t" = bad ] || [ "$$t" -lt 3 ] || [ "$$t" -gt 3600 ]; then \
	  echo "make install: HOOK_TIMEOUT='$(HOOK_TIMEOUT)': want whole seconds from 3 to 3600" >&2; exit 1; \
	fi

# The JSON first, then the binaries; the config stays (it is the admin's).
uninstall:
	rm -f $(DESTDIR)$(HOOKSDIR)/resctrl-mon-createruntime.json $(DESTDIR)$(HOOKSDIR)/resctrl-mon-poststop.json
	rm -f $(DESTDIR)$(UNITDIR)/resctrl-mon-reconcile.service $(DESTDIR)$(UNITDIR)/resctrl-mon-reconcile.timer \
	  $(DESTDIR)$(UNITDIR)/resctrl-mon-serve.service $(DESTDIR)$(UNITDIR)/resctrl-mon-nri.service
	rm -f $(DESTDIR)$(LIBEXECDIR)/resctrl-mon-hook $(DESTDIR)$(BINDIR)/resctrl-mon $(DESTDIR)$(BINDIR)/resctrl-mon-runtime \
	  $(DESTDIR)$(BINDIR)/resctrl-mon-nri $(DESTDIR)$(BINDIR)/kubectl-resctrl_mon
	rm -f $(DESTDIR)$(DOCDIR)/examples/containerd-nri.toml $(DESTDIR)$(DOCDIR)/examples/crio-nri.conf
	rm -f $(DESTDIR)$(CONFDIR)/host-install.json
	rm -f $(DESTDIR)$(DOCDIR)/README.md
	rm -rf $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)/test $(DESTDIR)$(DOCDIR)/install

clean:
	rm -rf $(BIN)
