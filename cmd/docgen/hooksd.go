package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
	"github.com/resctrl-mon/resctrl-mon/lib/hostinstall"
)

// hooksDir holds the hook's hooks.d registrations as `make install` writes them with the
// default paths: what a packager copies, and what a reader of hooks/ finds beside the hook.
const hooksDir = "hooks/hooks.d"

// hooksdPages are those registrations, made by the code the installer runs (lib/hooksd), so
// the files in the tree cannot drift from what an install writes.
func hooksdPages() ([]Page, error) {
	files, err := hooksd.Files(hooksd.Options{HookPath: config.DefaultHookPath, Timeout: hostinstall.DefaultTimeout})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", hooksDir, err)
	}
	var pages []Page
	for _, name := range slices.Sorted(maps.Keys(files)) {
		pages = append(pages, Page{Path: filepath.Join(hooksDir, name), Data: files[name]})
	}
	return pages, nil
}
