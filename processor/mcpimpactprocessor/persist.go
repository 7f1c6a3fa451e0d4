package mcpimpactprocessor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// Persistence: the index and the current-digest table are written to a
// storage extension on shutdown (and every persist_interval) and read back on
// start. The index is a compact binary encoding split into chunks, so no
// single value grows with the index; the table is small JSON.

const (
	keyMeta      = "index"
	keyContracts = "contracts"
	chunkSize    = 1 << 20
	storeVersion = 1
)

func chunkKey(i int) string { return keyMeta + "." + strconv.Itoa(i) }

type storedMeta struct {
	Version int       `json:"version"`
	Chunks  int       `json:"chunks"`
	Bytes   int       `json:"bytes"`
	SavedAt time.Time `json:"saved_at"`
}

type store struct {
	client storage.Client
}

func (s *store) close(ctx context.Context) error { return s.client.Close(ctx) }

// write replaces the stored index and contracts in one batch.
func (s *store) write(ctx context.Context, index, contracts []byte, savedAt time.Time) error {
	old, err := s.meta(ctx)
	if err != nil {
		old = storedMeta{} // unreadable: overwrite
	}
	meta := storedMeta{Version: storeVersion, Bytes: len(index), SavedAt: savedAt}
	var ops []*storage.Operation
	for off := 0; off < len(index); off += chunkSize {
		ops = append(ops, storage.SetOperation(chunkKey(meta.Chunks), index[off:min(off+chunkSize, len(index))]))
		meta.Chunks++
	}
	for i := meta.Chunks; i < old.Chunks; i++ {
		ops = append(ops, storage.DeleteOperation(chunkKey(i)))
	}
	m, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	ops = append(ops, storage.SetOperation(keyContracts, contracts), storage.SetOperation(keyMeta, m))
	return s.client.Batch(ctx, ops...)
}

func (s *store) meta(ctx context.Context) (storedMeta, error) {
	var meta storedMeta
	raw, err := s.client.Get(ctx, keyMeta)
	if err != nil || raw == nil {
		return meta, err
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return meta, fmt.Errorf("stored index header: %w", err)
	}
	if meta.Version != storeVersion {
		return storedMeta{}, fmt.Errorf("stored index has version %d, this processor reads %d", meta.Version, storeVersion)
	}
	return meta, nil
}

// read returns the stored index and contracts; both nil when nothing is stored.
func (s *store) read(ctx context.Context) (index, contracts []byte, err error) {
	meta, err := s.meta(ctx)
	if err != nil || meta.Chunks == 0 {
		return nil, nil, err
	}
	ops := make([]*storage.Operation, 0, meta.Chunks+1)
	for i := range meta.Chunks {
		ops = append(ops, storage.GetOperation(chunkKey(i)))
	}
	ops = append(ops, storage.GetOperation(keyContracts))
	if err := s.client.Batch(ctx, ops...); err != nil {
		return nil, nil, err
	}
	index = make([]byte, 0, meta.Bytes)
	for _, op := range ops[:meta.Chunks] {
		if op.Value == nil {
			return nil, nil, fmt.Errorf("stored index chunk %q is missing", op.Key)
		}
		index = append(index, op.Value...)
	}
	if len(index) != meta.Bytes {
		return nil, nil, fmt.Errorf("stored index has %d bytes, header says %d", len(index), meta.Bytes)
	}
	return index, ops[meta.Chunks].Value, nil
}

// save writes the current state to storage.
func (p *impactProcessor) save(ctx context.Context) error {
	p.mu.Lock()
	index := encodeIndex(p.state.index)
	contracts, err := encodeContracts(p.state.contracts)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	err = p.store.write(ctx, index, contracts, p.now())
	p.storage.Wrote(err)
	return err
}

// restore reads the stored state. What cannot be read is logged and
// skipped: a damaged store must not keep the collector from starting.
func (p *impactProcessor) restore(ctx context.Context) {
	index, contracts, err := p.store.read(ctx)
	if err != nil {
		p.logger.Warn("Reading the impact index from storage failed; starting empty", zap.Error(err))
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if contracts != nil {
		if err := decodeContracts(contracts, p.state.contracts); err != nil {
			p.logger.Warn("Stored contracts unreadable; waiting for snapshot events", zap.Error(err))
		}
	}
	if index != nil {
		n, err := decodeIndex(index, p.state.index, unixSec(now.Add(-p.cfg.Window).UnixNano()))
		if err != nil {
			p.logger.Warn("Stored impact index damaged; kept what was read before the damage", zap.Int("entries", n), zap.Error(err))
		}
		p.state.index.takeRemovals() // restoring into a smaller bound is not an eviction the user caused
		p.entries.Store(int64(p.state.index.size))
	}
}

type storedServer struct {
	Name   string                     `json:"name"`
	URL    string                     `json:"url,omitempty"`
	Info   string                     `json:"info,omitempty"`
	Listed bool                       `json:"listed"`
	Tools  map[string][]storedVersion `json:"tools"`
	// Changes is each tool's last change (absent before drift events).
	Changes map[string]storedChange `json:"changes,omitempty"`
	// Usage is the calls by tool, digest and day (usage.go).
	Usage []storedUsage `json:"usage,omitempty"`
}

type storedUsage struct {
	Tool   string `json:"tool"`
	Digest string `json:"digest,omitempty"`
	Day    uint32 `json:"day"`
	Calls  uint32 `json:"calls"`
}

type storedChange struct {
	DriftID  string `json:"drift_id"`
	Severity string `json:"severity"`
	At       int64  `json:"at"`
}

type storedVersion struct {
	Since  int64  `json:"since"`
	Digest string `json:"digest"`
}

func encodeContracts(c *contracts) ([]byte, error) {
	out := make([]storedServer, 0, len(c.servers))
	for _, s := range c.servers {
		ss := storedServer{Name: s.name, URL: s.url, Info: s.info, Listed: s.listed, Tools: make(map[string][]storedVersion, len(s.tools))}
		for tool, h := range s.tools {
			vs := make([]storedVersion, len(h))
			for i, v := range h {
				vs[i] = storedVersion{Since: v.since, Digest: v.digest}
			}
			ss.Tools[tool] = vs
		}
		for tool, c := range s.changes {
			if ss.Changes == nil {
				ss.Changes = map[string]storedChange{}
			}
			ss.Changes[tool] = storedChange{DriftID: c.driftID, Severity: c.severity, At: c.at}
		}
		for k, n := range s.usage {
			ss.Usage = append(ss.Usage, storedUsage{Tool: k.tool, Digest: k.digest, Day: k.day, Calls: n})
		}
		out = append(out, ss)
	}
	return json.Marshal(out)
}

func decodeContracts(raw []byte, c *contracts) error {
	var in []storedServer
	if err := json.Unmarshal(raw, &in); err != nil {
		return err
	}
	for _, ss := range in {
		if ss.Name == "" || len(c.servers) >= maxServers {
			continue
		}
		s := &server{name: ss.Name, url: ss.URL, info: ss.Info, listed: ss.Listed, tools: map[string][]version{}}
		s.host, s.port = hostPort(s.url)
		for tool, vs := range ss.Tools {
			if len(s.tools) >= maxToolsPerServer {
				break
			}
			h := make([]version, 0, min(len(vs), maxVersionsPerTool))
			for _, v := range vs {
				h = setAt(h, v.Since, v.Digest)
			}
			s.tools[tool] = h
		}
		for tool, ch := range ss.Changes {
			_, known := severityRank[ch.Severity]
			if _, ok := s.tools[tool]; ok && known {
				if s.changes == nil {
					s.changes = map[string]toolChangeInfo{}
				}
				s.changes[tool] = toolChangeInfo{driftID: ch.DriftID, severity: ch.Severity, at: ch.At}
			}
		}
		for _, u := range ss.Usage {
			if len(s.usage) >= maxUsageRows || u.Tool == "" || u.Calls == 0 {
				continue
			}
			if s.usage == nil {
				s.usage = map[usageKey]uint32{}
			}
			s.usage[usageKey{tool: clip(u.Tool), digest: clip(u.Digest), day: u.Day}] = u.Calls
		}
		for _, h := range s.tools {
			if n := len(h); n > 0 {
				s.observed = max(s.observed, h[n-1].since)
			}
		}
		c.servers[s.name] = s
	}
	c.gen++
	return nil
}

var errCorrupt = errors.New("corrupt impact index encoding")
