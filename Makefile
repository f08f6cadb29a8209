# resctrl-mon. `make demo` and `make test` install what they need (test/deps.sh, as root).
PREFIX    ?= /usr/local
DESTDIR   ?=
BINDIR    ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/oci/hooks.d
HOOKSDIR  ?= /etc/containers/oci/hooks.d
CONFDIR   ?= /etc/resctrl-mon
UNITDIR   ?= /etc/systemd/system
DOCDIR    ?= $(PREFIX)/share/doc/resctrl-mon
GO        ?= go
GOBIN     := $(shell $(GO) env GOPATH)/bin
GOLANGCI  := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
BIN       := bin
# urfave/cli's man-page support pulls in a markdown library whose init costs the hook ~5 ms
# on every call; the binaries do not need it.
TAGS      := -tags urfave_cli_no_docs

export PATH := /usr/local/go/bin:$(GOBIN):$(PATH)

.PHONY: all build test fuzz bench lint demo install uninstall clean deps runtimes

all: build

deps:
	@bash test/deps.sh

# CRI-O, containerd and crictl for the end-to-end tests, built from the Go module proxy into
# /var/cache/resctrl-mon-test (RESCTRL_MON_TEST_CACHE) once: ~10 minutes on a fresh 2-core
# machine, nothing when they are there. The tests never build them (go test would time out).
runtimes: deps
	@for r in crictl crio containerd; do bash test/runtimes/$$r.sh >/dev/null || exit 1; done

build:
	$(GO) build $(TAGS) ./...
	$(GO) build $(TAGS) -o $(BIN)/resctrlsim ./test/resctrlsim/cmd/resctrlsim
	$(GO) build $(TAGS) -o $(BIN)/resctrl-mon-hook ./hooks
	$(GO) build $(TAGS) -o $(BIN)/resctrl-mon ./cmd/resctrl-mon

# Every test, the simulator's included: they need root and /dev/fuse, and skip without them
# unless RESCTRLSIM_REQUIRE=1 (CI sets it, so nothing is skipped there).
# The end-to-end tests run without -race: they drive external binaries, and a race-built
# simulator in the test process would be 5-10x slower under fifty concurrent containers
# (the simulator itself is race-tested by its own package).
test: deps runtimes
	$(GO) test $(TAGS) -race -count=1 $$($(GO) list ./... | grep -v /test/e2e)
	$(GO) test $(TAGS) -count=1 ./test/e2e/...

# A short run of every fuzz target (the corpus seeds always run in `make test`).
FUZZTIME ?= 15s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run XXX -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Benchmarks print ratios against a baseline measured in the same run.
bench: deps
	$(GO) test $(TAGS) -run XXX -bench . -benchtime 2000x ./test/resctrlsim/
	$(GO) test $(TAGS) -run XXX -bench Hook -benchtime 200x ./test/e2e/
	$(GO) test $(TAGS) -run XXX -bench ContainerStart -benchtime 30x ./test/e2e/
	$(GO) test $(TAGS) -run XXX -bench . -benchtime 3x ./lib/lifecycle/
	$(GO) test $(TAGS) -run XXX -bench . -benchtime 200x ./lib/state/

lint:
	@command -v golangci-lint >/dev/null 2>&1 || $(GO) install $(GOLANGCI)
	golangci-lint run ./...

demo: deps build
	bash test/demo.sh $(BIN)

# The binary first, the hooks.d JSON second: a JSON whose path does not exist when the
# runtime loads it is dropped.
install: build
	install -D -m 0755 $(BIN)/resctrl-mon-hook $(DESTDIR)$(LIBEXECDIR)/resctrl-mon-hook
	install -D -m 0755 $(BIN)/resctrl-mon $(DESTDIR)$(BINDIR)/resctrl-mon
	install -D -m 0755 $(BIN)/resctrlsim $(DESTDIR)$(BINDIR)/resctrlsim
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	sed 's|@BINDIR@|$(BINDIR)|g; s|@DOCDIR@|$(DOCDIR)|g' install/systemd/resctrl-mon-reconcile.service.in \
	  | install -D -m 0644 /dev/stdin $(DESTDIR)$(UNITDIR)/resctrl-mon-reconcile.service
	install -D -m 0644 install/systemd/resctrl-mon-reconcile.timer $(DESTDIR)$(UNITDIR)/resctrl-mon-reconcile.timer
	install -d $(DESTDIR)$(HOOKSDIR)
	for f in install/hooks.d/*.json.in; do \
	  sed 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' $$f > $(DESTDIR)$(HOOKSDIR)/$$(basename $$f .in); \
	done
	test -e $(DESTDIR)$(CONFDIR)/config.yaml || install -D -m 0644 install/config.yaml $(DESTDIR)$(CONFDIR)/config.yaml

# The JSON first, then the binary; the config stays (it is the admin's).
uninstall:
	rm -f $(DESTDIR)$(HOOKSDIR)/resctrl-mon-createruntime.json $(DESTDIR)$(HOOKSDIR)/resctrl-mon-poststop.json
	rm -f $(DESTDIR)$(UNITDIR)/resctrl-mon-reconcile.service $(DESTDIR)$(UNITDIR)/resctrl-mon-reconcile.timer
	rm -f $(DESTDIR)$(LIBEXECDIR)/resctrl-mon-hook $(DESTDIR)$(BINDIR)/resctrl-mon $(DESTDIR)$(BINDIR)/resctrlsim
	rm -f $(DESTDIR)$(DOCDIR)/README.md

clean:
	rm -rf $(BIN)
