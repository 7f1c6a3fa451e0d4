//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/procs"
	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestDiscoveredServer runs discovery with the distribution: host_observer
// finds the quickstart server listening on loopback and receiver_creator
// starts the mcpdrift receiver for it, which takes a snapshot. The server
// stops: receiver_creator stops the receiver, so the target is no longer
// probed. It starts again (a new process, so a new endpoint ID): the new
// receiver restores the stored baseline, and the unchanged server is no
// drift (its one snapshot announces the baseline's digest). It logs the
// time from the server's port answering to the first snapshot.
func TestDiscoveredServer(t *testing.T) {
	t.Parallel()
	o := binaries(t)
	o.Agent, o.Server = "", ""
	o.Config = filepath.Join(testservers.RepoRoot(), "e2e", "testdata", "collector-discovery.yaml")
	tick, err := procs.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	o.ExtraEnv = []string{"DEMO_TICK_PORT=" + strconv.Itoa(tick[0])}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := quickstart.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	defer dumpLogsOnFailure(t, o.Dir)
	target := fmt.Sprintf("127.0.0.1:%d", s.Ports.Server)
	collectorLog := s.LogFile("collector")

	runs := 0
	startServer := func() (*procs.Proc, time.Time) {
		t.Helper()
		runs++
		p, err := procs.Start("server", built(t, "bin/quickstart-server"), quickstart.ServerArgs(s.Ports.Server, "v1", 0), nil,
			filepath.Join(o.Dir, fmt.Sprintf("server-%d.log", runs)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Stop(5 * time.Second) })
		if err := p.WaitHTTP(ctx, s.ServerURL(), 30*time.Second, func(int) bool { return true }); err != nil {
			t.Fatal(err)
		}
		return p, time.Now()
	}

	server, up := startServer()
	out := eventually(t, o.Dir, "a snapshot of the discovered server", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventSnapshot)) >= 1
	})
	first := out.Events(semconv.EventSnapshot)[0]
	if got := first.Attr(semconv.ServerName); got != target {
		t.Fatalf("the snapshot is of %q, want the discovered %q", got, target)
	}
	t.Logf("discovered endpoint to first snapshot: %.2fs (host_observer refresh_interval 1s, collection_interval 1s)",
		first.Record.ObservedTimestamp().AsTime().Sub(up).Seconds())
	probed(t, o.Dir, target, 2)

	server.Stop(5 * time.Second)
	stopped := waitLog(t, collectorLog, "receiver_creator stopping the receiver of "+target, func(l logLine) bool {
		return l.Msg == "stopping receiver" && strings.Contains(l.EndpointID, fmt.Sprintf("-%d-", s.Ports.Server))
	})
	// Three probes of the static target after the stop: a receiver still
	// running would have probed the discovered one (and failed) meanwhile.
	eventually(t, o.Dir, "three probes of the static target after the stop", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(pointTimes(out, "mcpdrift.probe.up", "ticks", stopped)) >= 3
	})

	_, _ = startServer()
	restarted := waitLog(t, collectorLog, "the receiver for the returning server, with its baseline restored", func(l logLine) bool {
		return l.Msg == "mcpdrift receiver started" && l.Restored == 1 && l.Time.After(stopped)
	})
	// confirm_after is 2: four probes of an unchanged server would have
	// confirmed a drift.
	out = probed(t, o.Dir, target, 4)
	for _, at := range pointTimes(out, "mcpdrift.probe.up", target, stopped) {
		if at.Before(restarted) {
			t.Errorf("the target was probed at %s, after its receiver was stopped (%s) and before the server returned (%s)", at, stopped, restarted)
		}
	}
	if d := out.Events(semconv.EventDrift); len(d) > 0 {
		t.Errorf("%d drift events for an unchanged server that restarted; first: %s", len(d), d[0].Record.Body().AsString())
	}
	// The restored receiver announces the current digests once: the
	// baseline's, as the server did not change.
	if snaps := out.Events(semconv.EventSnapshot); len(snaps) != 2 || snaps[1].Attr(semconv.ContractDigest) != snaps[0].Attr(semconv.ContractDigest) {
		t.Errorf("%d snapshots, want two of one contract: the first, and the restored receiver's", len(snaps))
	}
}

// logLine is what TestDiscoveredServer reads of the collector's JSON log.
type logLine struct {
	Time       time.Time
	Msg        string `json:"msg"`
	EndpointID string `json:"endpoint_id"`
	Restored   int    `json:"baselines_restored"`
}

// waitLog waits for a line of the collector's JSON log that match accepts,
// and returns it.
func waitLog(t *testing.T, path, what string, match func(logLine) bool) time.Time {
	t.Helper()
	var found time.Time
	waitUntil(t, context.Background(), what, 60*time.Second, func() (bool, string) {
		f, err := os.Open(path)
		if err != nil {
			return false, err.Error()
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l struct {
				logLine
				TS string `json:"ts"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			if l.Time, err = time.Parse(time.RFC3339Nano, l.TS); err != nil {
				t.Fatalf("log line with time %q: %v", l.TS, err)
			}
			if match(l.logLine) {
				found = l.Time
				return true, ""
			}
		}
		return false, "no such line in " + path
	})
	return found
}

// pointTimes returns the times of metric's data points for server after
// since, oldest first.
func pointTimes(out *quickstart.Outputs, metric, server string, since time.Time) []time.Time {
	var times []time.Time
	for _, p := range out.GaugePoints(metric, server) {
		if at := p.Timestamp().AsTime(); at.After(since) {
			times = append(times, at)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	return times
}
