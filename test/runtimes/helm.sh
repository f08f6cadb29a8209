#!/usr/bin/env bash
# Builds helm into the test cache (the chart's lint, template and the cluster tests). See
# lib.sh; --print only prints the directory.
. "$(dirname "$0")/lib.sh"

version=v4.3.2

build() {
	GOBIN=$1 CGO_ENABLED=0 go install -trimpath \
		-ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$version" \
		"helm.sh/helm/v4/cmd/helm@$version"
}

cached helm "$version" build "${1:-}"
