package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Markdown lists the markdown files a reader follows links through: README.md, test/README.md
// and everything under docs/ (paths relative to root, slash-separated).
func Markdown(root string) ([]string, error) {
	files := []string{"README.md", "test/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

var (
	fence      = regexp.MustCompile("(?ms)^```.*?^```[^\n]*$")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	link       = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$`)
	mdLink     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// CheckLinks checks every relative link of the files (Markdown's list) in root: the file it
// names exists, and an #anchor is a heading of that page, by GitHub's rules. One error each.
func CheckLinks(root string, files []string) []error {
	var errs []error
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		text := inlineCode.ReplaceAllString(fence.ReplaceAllString(string(b), ""), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if u := strings.IndexByte(target, ':'); u > 0 && !strings.ContainsAny(target[:u], "/#.") {
				continue // a URL (https:, mailto:), not a file of ours
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := f
			if file != "" {
				dest = path.Join(path.Dir(f), file)
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
				errs = append(errs, fmt.Errorf("%s: link %s: %s does not exist", f, target, dest))
				continue
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if anchors[dest] == nil {
				b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dest)))
				if err != nil {
					errs = append(errs, err)
					continue
				}
				anchors[dest] = Anchors(string(b))
			}
			if !anchors[dest][anchor] {
				errs = append(errs, fmt.Errorf("%s: link %s: %s has no heading #%s", f, target, dest, anchor))
			}
		}
	}
	return errs
}

// Anchors are the ids GitHub gives a page's headings: the text lowercased, with links
// reduced to their text, everything but letters, digits, spaces, hyphens and underscores
// dropped, spaces made hyphens; a repeated one gets -1, -2, ...
func Anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(md, ""), -1) {
		s := Slug(m[1])
		id := s
		if n := seen[s]; n > 0 {
			id = s + "-" + strconv.Itoa(n)
		}
		seen[s]++
		out[id] = true
	}
	return out
}

// Slug is a heading's GitHub anchor.
func Slug(h string) string {
	h = mdLink.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
