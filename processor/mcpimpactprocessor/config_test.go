package mcpimpactprocessor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	storage := component.MustNewIDWithName("file_storage", "mcpimpact")
	for _, tc := range []struct {
		id      component.ID
		want    *Config
		wantErr []string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig().(*Config)},
		{id: component.NewIDWithName(metadata.Type, "custom"), want: &Config{
			Window: 6 * time.Hour, RecentWindow: 15 * time.Minute, MaxIndexEntries: 250_000,
			MaxSessionsPerRecord: 25, MetricCardinalityLimit: 50, IndexServerSpans: false,
			Storage: &storage, PersistInterval: time.Minute, PromptProbeInterval: 0,
		}},
		{id: component.NewIDWithName(metadata.Type, "bad"), wantErr: []string{
			"recent_window (2h0m0s) must not exceed window (1h0m0s)",
			"max_index_entries must be between 1 and 50000000, got 0",
			"max_sessions_per_record must be between 0 and 1000, got -1",
			"metric_cardinality_limit must be between 1 and 10000, got 0",
			"persist_interval must be 0 or at least 1s, got 10ms",
			"prompt_probe_interval must be 0 or at least 100ms, got 10ms",
		}},
	} {
		t.Run(tc.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tc.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if tc.wantErr != nil {
				// As the Collector validates: once per error, naming the key.
				require.Error(t, err)
				for _, msg := range tc.wantErr {
					assert.Equal(t, 1, strings.Count(err.Error(), msg), "%q in:\n%s", msg, err)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg)
		})
	}
}

func TestValidateWindow(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Window = 0
	assert.ErrorContains(t, cfg.Validate(), "window must be at least 1s")
	cfg = createDefaultConfig().(*Config)
	cfg.RecentWindow = 0
	assert.ErrorContains(t, cfg.Validate(), "recent_window must be at least 1s")
	cfg = createDefaultConfig().(*Config)
	cfg.PersistInterval = -time.Second
	assert.ErrorContains(t, cfg.Validate(), "persist_interval must not be negative")
	assert.NoError(t, createDefaultConfig().(*Config).Validate())
}

// metric_label_limit (distinct values per label, "_other" past them) became
// metric_cardinality_limit (series, otel.metric.overflow past them): a
// configuration that still sets the old key fails, rather than meaning
// something else silently.
func TestMetricLabelLimitIsRejected(t *testing.T) {
	cfg := createDefaultConfig()
	err := confmap.NewFromStringMap(map[string]any{"metric_label_limit": 100}).Unmarshal(cfg)
	assert.ErrorContains(t, err, "metric_label_limit")
}
