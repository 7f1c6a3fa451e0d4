package main

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// metadata is the part of an mdatagen metadata.yaml the reference shows.
type metadata struct {
	Type               string                       `yaml:"type"`
	ResourceAttributes map[string]resourceAttribute `yaml:"resource_attributes"`
	Attributes         map[string]attribute         `yaml:"attributes"`
	Metrics            map[string]metric            `yaml:"metrics"`
	Telemetry          struct {
		Metrics map[string]metric `yaml:"metrics"`
	} `yaml:"telemetry"`
}

type resourceAttribute struct {
	Description string `yaml:"description"`
	Type        string `yaml:"type"`
	Enabled     bool   `yaml:"enabled"`
}

type attribute struct {
	NameOverride string   `yaml:"name_override"`
	Description  string   `yaml:"description"`
	Type         string   `yaml:"type"`
	Enum         []string `yaml:"enum"`
}

// key is the attribute's name on the wire.
func (a attribute) key(id string) string {
	if a.NameOverride != "" {
		return a.NameOverride
	}
	return id
}

type metric struct {
	Description string   `yaml:"description"`
	Unit        string   `yaml:"unit"`
	Enabled     bool     `yaml:"enabled"`
	Attributes  []string `yaml:"attributes"`
	Gauge       *struct {
		ValueType string `yaml:"value_type"`
	} `yaml:"gauge"`
	Sum *struct {
		ValueType              string `yaml:"value_type"`
		Monotonic              bool   `yaml:"monotonic"`
		AggregationTemporality string `yaml:"aggregation_temporality"`
	} `yaml:"sum"`
	Histogram *struct {
		ValueType string `yaml:"value_type"`
	} `yaml:"histogram"`
}

// kind describes the metric's instrument the way the Collector's docs do.
func (m metric) kind() string {
	switch {
	case m.Sum != nil && m.Sum.Monotonic:
		return "counter (monotonic sum, " + m.Sum.ValueType + ")"
	case m.Sum != nil:
		return "sum (" + m.Sum.ValueType + ")"
	case m.Gauge != nil:
		return "gauge (" + m.Gauge.ValueType + ")"
	case m.Histogram != nil:
		return "histogram (" + m.Histogram.ValueType + ")"
	}
	return "unknown"
}

func readMetadata(name string, src []byte) (*metadata, error) {
	var md metadata
	if err := yaml.Unmarshal(src, &md); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if md.Type == "" {
		return nil, fmt.Errorf("%s: no type", name)
	}
	for id, m := range md.allMetrics() {
		for _, a := range m.Attributes {
			if _, ok := md.Attributes[a]; !ok {
				return nil, fmt.Errorf("%s: metric %s names undefined attribute %s", name, id, a)
			}
		}
	}
	return &md, nil
}

func (md *metadata) allMetrics() map[string]metric {
	all := map[string]metric{}
	for id, m := range md.Metrics {
		all[id] = m
	}
	for id, m := range md.Telemetry.Metrics {
		all[id] = m
	}
	return all
}
