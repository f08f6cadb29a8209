package main

import (
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// configRow is one key of the configuration reference.
type configRow struct {
	Key, Env, Flag, Default, Meaning string
}

// configSee links a key to the page that says more about it.
var configSee = map[string]string{
	"retention":     "[pod lifetime](../design/pod-lifetime.md)",
	"snapshotDir":   "[snapshots](snapshots.md)",
	"failurePolicy": "[failure policy](failure-policy.md)",
	"hookBudget":    "[the time budget](../operations/troubleshooting.md#a-slow-resctrl-and-the-time-budget)",
	"log":           "[the log](log.md)",
	"podSelector":   "[NRI](../install/nri.md)",
	"runtime":       "[the runtime wrapper](../install/wrapper.md)",
	"runtimeHook":   "[the runtime wrapper](../install/wrapper.md)",
	"runtimeRoots":  "[reconcile](../design/reconcile.md)",
}

func configData() []configRow {
	var rows []configRow
	for _, s := range config.Settings() {
		r := configRow{Key: code(s.Key), Env: "file only", Default: "(none)", Meaning: cell(s.Meaning)}
		if env := s.Env(); env != "" {
			r.Env, r.Flag = code(env), code("--"+s.Key)
		}
		if d := s.Default(); d != "" {
			parts := strings.Split(d, ", ")
			for i, p := range parts {
				parts[i] = code(p)
			}
			r.Default = strings.Join(parts, ", ")
		}
		if see, ok := configSee[s.Key]; ok {
			r.Meaning += "; see " + see
		}
		rows = append(rows, r)
	}
	return rows
}

// code is s as inline code in a table cell.
func code(s string) string { return "`" + strings.ReplaceAll(s, "|", `\|`) + "`" }

// cell is plain text made safe for a table cell: no pipe ends the cell, no <word> is taken
// for an HTML tag.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}
