package contract

import (
	"slices"
	"strings"
)

// diffServer compares what is not a definition: capabilities, protocol
// version, spec generation, transport, serverInfo and instructions.
func diffServer(c *collector, old, new *Snapshot) {
	add := func(rule RuleID, path string, before, after *value, vars map[string]string) {
		c.add(rule, KindServer, "", path, rawJSON(before), rawJSON(after), vars)
	}
	str := func(s string) *value {
		if s == "" {
			return nil
		}
		return &value{kind: '"', text: s}
	}
	diffCapabilities(c, old, new)
	if old.ProtocolVersion != "" && new.ProtocolVersion != "" && old.ProtocolVersion != new.ProtocolVersion {
		add(RuleServerProtocolVersionChanged, "/protocol_version", str(old.ProtocolVersion), str(new.ProtocolVersion), nil)
	}
	if known(old.SpecGeneration) && known(new.SpecGeneration) && old.SpecGeneration != new.SpecGeneration {
		add(RuleServerSpecGenerationChanged, "/spec_generation", str(string(old.SpecGeneration)), str(string(new.SpecGeneration)), nil)
	}
	if ot, nt := old.Server.Transport, new.Server.Transport; ot != "" && nt != "" && ot != nt {
		add(RuleServerTransportChanged, "/server/transport", str(ot), str(nt), nil)
	}
	oi, _ := parseValue(old.ServerInfo)
	ni, _ := parseValue(new.ServerInfo)
	if oi.isObject() || ni.isObject() {
		if oi == nil {
			oi = &value{kind: '{'}
		}
		if ni == nil {
			ni = &value{kind: '{'}
		}
		changedMembers(oi, ni, func(m string, ov, nv *value) {
			path := "/server_info/" + escapePointer(m)
			if m == "version" {
				add(RuleServerVersionChanged, path, ov, nv, nil)
				return
			}
			add(RuleServerInfoChanged, path, ov, nv, map[string]string{"keyword": SanitizeText(m)})
		})
	}
	if !equalInstructions(old.Instructions, new.Instructions) {
		var os, ns string
		if old.Instructions != nil {
			os = *old.Instructions
		}
		if new.Instructions != nil {
			ns = *new.Instructions
		}
		var ov, nv *value
		if old.Instructions != nil {
			ov = &value{kind: '"', text: os}
		}
		if new.Instructions != nil {
			nv = &value{kind: '"', text: ns}
		}
		if hits := NewHits(ScanText(os, ScanOptions{}), ScanText(ns, ScanOptions{})); len(hits) > 0 {
			add(RuleServerInstructionsSuspicious, "/instructions", ov, nv, map[string]string{"hits": FormatHits(hits)})
		} else {
			add(RuleServerInstructionsChanged, "/instructions", ov, nv, nil)
		}
	}
}

func known(g SpecGeneration) bool { return g == SpecStateful2025 || g == SpecStateless2026 }

func equalInstructions(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// diffCapabilities compares the flattened capability names; a removed or
// added group is reported once, not once per sub-flag.
func diffCapabilities(c *collector, old, new *Snapshot) {
	ov, _ := parseValue(old.Capabilities)
	nv, _ := parseValue(new.Capabilities)
	on, nn := capabilityNames(old), capabilityNames(new)
	removed, added := without(on, nn), without(nn, on)
	report := func(names []string, side *value, isRemoved bool) {
		for _, name := range names {
			if parent, _, ok := cutLast(name); ok && slices.Contains(names, parent) {
				continue
			}
			path := "/capabilities/" + strings.ReplaceAll(escapePointer(name), ".", "/")
			val := rawJSON(lookupDotted(side, name))
			vars := map[string]string{"param": SanitizeText(name)}
			switch {
			case isRemoved && strings.HasSuffix(name, ".listChanged"):
				c.add(RuleCapabilityListChangedRemoved, KindServer, "", path, val, nil, vars)
			case isRemoved:
				c.add(RuleCapabilityRemoved, KindServer, "", path, val, nil, vars)
			default:
				c.add(RuleCapabilityAdded, KindServer, "", path, nil, val, vars)
			}
		}
	}
	report(removed, ov, true)
	report(added, nv, false)
	if len(removed) > 0 || len(added) > 0 || !ov.isObject() || !nv.isObject() {
		return
	}
	changedMembers(ov, nv, func(m string, a, b *value) {
		c.add(RuleCapabilityChanged, KindServer, "", "/capabilities/"+escapePointer(m), rawJSON(a), rawJSON(b), map[string]string{"param": SanitizeText(m)})
	})
}

func capabilityNames(s *Snapshot) []string {
	if s.CapabilityNames != nil {
		return s.CapabilityNames
	}
	names, _ := CapabilityNames(s.Capabilities)
	return names
}

func cutLast(name string) (parent, leaf string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return "", name, false
	}
	return name[:i], name[i+1:], true
}

func lookupDotted(v *value, dotted string) *value {
	for _, seg := range strings.Split(dotted, ".") {
		v = v.get(seg)
	}
	return v
}
