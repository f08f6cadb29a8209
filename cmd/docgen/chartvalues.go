package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// ChartValues is the chart's values file, relative to the repository's root.
const ChartValues = "install/helm/resctrl-mon/values.yaml"

// valueRow is one row of the chart README's values table.
type valueRow struct {
	Key, Type, Default, Description string
}

// descMark marks a value's description in values.yaml, as helm-docs does: a comment whose first
// line starts with "# -- ", the lines after it continuing it. Other comments are for whoever
// edits the file.
const descMark = "# --"

// isDescMark: "# --" alone or followed by a space ("# --timeout" continues a sentence).
func isDescMark(line string) bool {
	l := strings.TrimSpace(line)
	return l == descMark || strings.HasPrefix(l, descMark+" ")
}

func chartValuesData(root string) (any, error) {
	b, err := os.ReadFile(filepath.Join(root, ChartValues))
	if err != nil {
		return nil, err
	}
	return parseChartValues(b)
}

// parseChartValues lists values.yaml's documented keys in file order. A key with a "# --"
// comment is one row, whatever its value (a map or a list as a whole); a map without one is
// walked into; anything else without one is an error naming the key, so no value goes
// undocumented.
func parseChartValues(b []byte) ([]valueRow, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("values: not a YAML map")
	}
	var rows []valueRow
	err := walkValues(doc.Content[0], "", &rows)
	return rows, err
}

func walkValues(m *yaml.Node, prefix string, rows *[]valueRow) error {
	var errs []error
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := prefix + k.Value
		desc, ok := description(k.HeadComment)
		switch {
		case ok:
			r, err := row(key, v, desc)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			*rows = append(*rows, r)
		case v.Kind == yaml.MappingNode && len(v.Content) > 0:
			errs = append(errs, walkValues(v, key+".", rows))
		default:
			errs = append(errs, fmt.Errorf("values: %s (line %d) has no %q description", key, k.Line, descMark))
		}
	}
	return errors.Join(errs...)
}

// description is the "# --" block of a key's head comment, as one line.
func description(head string) (string, bool) {
	lines := strings.Split(head, "\n")
	start := -1
	for i, l := range lines {
		if isDescMark(l) {
			start = i
		}
	}
	if start < 0 {
		return "", false
	}
	var words []string
	for i, l := range lines[start:] {
		l = strings.TrimSpace(l)
		if l == "" {
			break
		}
		if i == 0 {
			l = strings.TrimPrefix(l, descMark)
		} else {
			l = strings.TrimPrefix(l, "#")
		}
		if l = strings.TrimSpace(l); l != "" {
			words = append(words, l)
		}
	}
	return strings.Join(words, " "), len(words) > 0
}

func row(key string, v *yaml.Node, desc string) (valueRow, error) {
	var val any
	if err := v.Decode(&val); err != nil {
		return valueRow{}, fmt.Errorf("values: %s: %w", key, err)
	}
	var typ string
	switch v.Kind {
	case yaml.SequenceNode:
		typ = "list"
	case yaml.MappingNode:
		typ = "object"
	default:
		typ = strings.TrimPrefix(v.Tag, "!!")
		if typ == "str" {
			typ = "string"
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(val); err != nil {
		return valueRow{}, fmt.Errorf("values: %s: %w", key, err)
	}
	return valueRow{Key: code(key), Type: typ, Default: code(strings.TrimSpace(b.String())), Description: cell(desc)}, nil
}
