package replicate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"workspace/db"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// replicateAndRestore writes under replication to replicaURL with writers
// in parallel, stops (the store first, then the replication, as serve
// does), restores from the replica into a new file and checks every
// acknowledged write is there.
func replicateAndRestore(t *testing.T, replicaURL string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "live.db")
	store, err := db.Open(ctx, db.Options{Path: src, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Start(ctx, src, replicaURL, quiet)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		errs  = make(chan error, 4)
	)
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				key := fmt.Sprintf("rep-%d-%d", g, i)
				err := store.InTx(ctx, func(q *db.Queries) error {
					return q.MetaPut(ctx, db.MetaPutParams{Key: key, Value: strings.Repeat("x", 500)})
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked = append(acked, key)
				mu.Unlock()
				if i == 25 && g == 0 {
					// Mid-way, ship what there is: later writes go out as
					// increments on top of it.
					if err := rep.Sync(ctx); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}

	restored := filepath.Join(dir, "restored", "ws.db")
	if err := RestoreFromReplica(ctx, replicaURL, restored); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckCopy(ctx, restored); err != nil {
		t.Fatal(err)
	}
	back, err := db.Open(ctx, db.Options{Path: restored, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	for _, key := range acked {
		var v string
		if err := back.Reader.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v); err != nil {
			t.Fatalf("acknowledged write %s missing after restore: %v", key, err)
		}
	}
	if len(acked) != 200 {
		t.Fatalf("%d writes acknowledged, want 200", len(acked))
	}
}

// TestReplicateFile: a directory replica, end to end.
func TestReplicateFile(t *testing.T) {
	t.Parallel()
	replicateAndRestore(t, filepath.Join(t.TempDir(), "replica"))
}

// TestReplicateS3: an S3 replica, against an S3 implementation started
// here (gofakes3, in memory).
func TestReplicateS3(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket("workspace-replica"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(backend).Server())
	defer s3.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "test-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_CA_BUNDLE", "") // refused with s3:// (replicaClient)
	u := "s3://workspace-replica/site-a?region=us-east-1&endpoint=" + url.QueryEscape(s3.URL)
	replicateAndRestore(t, u)
}

// TestReplicateShortLived: a write made right after replication starts
// and closed at once (before Litestream's first monitor tick) still
// reaches the replica.
func TestReplicateShortLived(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src, replica := filepath.Join(dir, "live.db"), filepath.Join(dir, "replica")
	store, err := db.Open(ctx, db.Options{Path: src, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Start(ctx, src, replica, quiet)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	err = store.InTx(ctx, func(q *db.Queries) error { return q.MetaPut(ctx, db.MetaPutParams{Key: "quick", Value: "1"}) })
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(dir, "restored.db")
	if err := RestoreFromReplica(ctx, replica, restored); err != nil {
		t.Fatal(err)
	}
	back, err := db.Open(ctx, db.Options{Path: restored, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	var v string
	if err := back.Reader.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'quick'`).Scan(&v); err != nil {
		t.Fatalf("the write is not in the replica: %v", err)
	}
}

// TestReplicaURLs: what --replicate and --from-replica refuse.
func TestReplicaURLs(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_CA_BUNDLE", "")
	for _, bad := range []string{"", "ftp://host/x", "gs://bucket/x"} {
		if _, err := replicaClient(bad); err == nil {
			t.Errorf("replica URL %q accepted", bad)
		}
	}
	for _, good := range []string{"/var/lib/replica", "file:///var/lib/replica", "s3://bucket/path?endpoint=http://127.0.0.1:9000", "sftp://user@host/path"} {
		if _, err := replicaClient(good); err != nil {
			t.Errorf("replica URL %q refused: %v", good, err)
		}
	}
	// An empty replica restores nothing, and the database is left alone.
	dir := t.TempDir()
	target := filepath.Join(dir, "ws.db")
	err := RestoreFromReplica(ctx, filepath.Join(dir, "empty-replica"), target)
	if err == nil || !strings.Contains(err.Error(), "no copy") {
		t.Fatalf("restore from an empty replica: %v", err)
	}
	// A server holding the database refuses the restore.
	unlock, err := db.LockForServe(target)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := RestoreFromReplica(ctx, filepath.Join(dir, "empty-replica"), target); err == nil {
		t.Fatal("restore while a server holds the database was not refused")
	}
	t.Setenv("AWS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
	if _, err := replicaClient("s3://bucket/path"); err == nil || !strings.Contains(err.Error(), "AWS_CA_BUNDLE") {
		t.Errorf("s3 replica with AWS_CA_BUNDLE set: %v", err)
	}
	if got := RedactURL("sftp://user:secret@host/path"); strings.Contains(got, "secret") {
		t.Fatalf("RedactURL left the password: %s", got)
	}
}
