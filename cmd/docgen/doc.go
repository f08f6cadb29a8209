// Command docgen writes the reference pages that must not drift from the code:
// docs/reference/config.md from lib/config's settings, metrics.md from what the exporter's
// collector gathers, cli.md from every binary's --help, and actions.md from the typed lists
// of lib/vocab and lib/inventory with their constants' comments. `make docs` runs it from
// the repository's root; TestPagesAreCurrent fails when a page in the tree is not what it
// writes. A development tool, never installed.
//
// Prose around the generated tables lives in templates/, as markdown.
package main
