// Command attrdoc writes docs/attributes.md, the event and attribute
// reference, from the constants of package semconv and their doc comments,
// the event sections of docs/events.md and the components' metadata.yaml.
// It runs from "go generate ./semconv"; its test fails when the committed
// file is out of date.
//
//	go run ./dev/attrdoc -root .
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// Inputs and output, relative to the repository root.
const (
	semconvFile = "semconv/semconv.go"
	eventsFile  = "docs/events.md"
	outputFile  = "docs/attributes.md"
)

// components lists the metadata.yaml files the reference covers.
func components() []component {
	return []component{
		{title: "the `mcpdrift` receiver", path: "receiver/mcpdriftreceiver/metadata.yaml"},
		{title: "the `mcpimpact` processor", path: "processor/mcpimpactprocessor/metadata.yaml"},
	}
}

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	doc, err := generate(*root)
	if err == nil {
		err = os.WriteFile(filepath.Join(*root, outputFile), []byte(doc), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "attrdoc:", err)
		os.Exit(1)
	}
}

// generate reads the inputs under root and renders the reference.
func generate(root string) (string, error) {
	read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(root, rel)) }
	src, err := read(semconvFile)
	if err != nil {
		return "", err
	}
	groups, err := readSemconv(semconvFile, src)
	if err != nil {
		return "", err
	}
	events, err := read(eventsFile)
	if err != nil {
		return "", err
	}
	comps := components()
	for i := range comps {
		y, err := read(comps[i].path)
		if err != nil {
			return "", err
		}
		if comps[i].md, err = readMetadata(comps[i].path, y); err != nil {
			return "", err
		}
	}
	return render(groups, eventAnchors(events), comps)
}
