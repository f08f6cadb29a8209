package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// word is one value of a typed list with what its constant's comment says.
type word struct{ Name, Meaning string }

type actionsPage struct {
	Actions, States, Reasons, Sources []word
}

// actionsData takes the words from the typed lists (their order is the documented one) and
// each meaning from the comment of its constant in the source: one place says both.
func actionsData(root string) (any, error) {
	life, err := constDocs(filepath.Join(root, "lib/vocab"))
	if err != nil {
		return nil, err
	}
	inv, err := constDocs(filepath.Join(root, "lib/inventory"))
	if err != nil {
		return nil, err
	}
	var p actionsPage
	if p.Actions, err = words(life, "Action", vocab.Actions); err != nil {
		return nil, err
	}
	if p.States, err = words(inv, "State", inventory.States); err != nil {
		return nil, err
	}
	if p.Reasons, err = words(life, "FailureReason", vocab.FailureReasons); err != nil {
		return nil, err
	}
	if p.Sources, err = words(life, "Source", vocab.Sources); err != nil {
		return nil, err
	}
	return p, nil
}

func words[T ~string](docs map[string]string, typ string, list []T) ([]word, error) {
	out := make([]word, 0, len(list))
	for _, v := range list {
		m, ok := docs[typ+"="+string(v)]
		if !ok || m == "" {
			return nil, fmt.Errorf("the %s constant %q has no comment to document it by", typ, v)
		}
		out = append(out, word{Name: code(string(v)), Meaning: cell(m)})
	}
	return out, nil
}

// constDocs maps "Type=value" to the comment of each typed string constant declared in the
// package in dir (test files left out): the line's own comment, else the one above it,
// without a leading "Name: ".
func constDocs(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				addConst(out, s.(*ast.ValueSpec))
			}
		}
	}
	return out, nil
}

func addConst(out map[string]string, v *ast.ValueSpec) {
	typ, ok := v.Type.(*ast.Ident)
	if !ok || len(v.Names) != 1 || len(v.Values) != 1 {
		return
	}
	lit, ok := v.Values[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return
	}
	val, err := strconv.Unquote(lit.Value)
	if err != nil {
		return
	}
	c := v.Comment
	if c == nil {
		c = v.Doc
	}
	if c == nil {
		return
	}
	text := strings.Join(strings.Fields(c.Text()), " ")
	text = strings.TrimPrefix(text, v.Names[0].Name+": ")
	out[typ.Name+"="+val] = text
}
