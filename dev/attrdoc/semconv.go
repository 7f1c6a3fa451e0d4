package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// constGroup is one const declaration of package semconv: its doc comment
// and its constants, in source order.
type constGroup struct {
	doc    string
	consts []constant
}

// constant is one string constant with its doc (or trailing line) comment.
type constant struct {
	name, value, doc string
}

// readSemconv parses the source of package semconv. Every constant must be
// a string literal with a doc comment or a trailing line comment: the
// reference is generated from those comments, so a constant without one is
// an error, not an empty cell.
func readSemconv(filename string, src []byte) ([]constGroup, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filename, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var groups []constGroup
	var errs []error
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		g := constGroup{doc: commentText(gd.Doc)}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			doc := commentText(vs.Doc)
			if doc == "" {
				doc = commentText(vs.Comment)
			}
			if doc == "" && !gd.Lparen.IsValid() {
				doc = g.doc // a lone const: its declaration's doc is its own
			}
			for i, name := range vs.Names {
				pos := fset.Position(name.Pos())
				if i >= len(vs.Values) {
					errs = append(errs, fmt.Errorf("%s: %s has no value", pos, name.Name))
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					errs = append(errs, fmt.Errorf("%s: %s is not a string literal", pos, name.Name))
					continue
				}
				value, err := strconv.Unquote(lit.Value)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %s: %w", pos, name.Name, err))
					continue
				}
				if doc == "" {
					errs = append(errs, fmt.Errorf("%s: %s has no doc comment; add one (a trailing // comment will do)", pos, name.Name))
				}
				g.consts = append(g.consts, constant{name: name.Name, value: value, doc: doc})
			}
		}
		if g.doc == "" {
			errs = append(errs, fmt.Errorf("%s: const block has no doc comment", fset.Position(gd.Pos())))
		}
		groups = append(groups, g)
	}
	return groups, errors.Join(errs...)
}

// commentText is a comment group's text on one line.
func commentText(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	return strings.Join(strings.Fields(cg.Text()), " ")
}
