// Package replicate streams a database's write-ahead log to a replica
// with Litestream and restores from one (docs/operations.md,
// "Replication"). A package of its own, imported by main alone, so the
// db and server packages and their tests do not build Litestream and the
// AWS SDK its s3 replica brings.
package replicate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/benbjohnson/litestream/file"
	_ "github.com/benbjohnson/litestream/s3" // registers s3:// replicas
	lssftp "github.com/benbjohnson/litestream/sftp"
	"golang.org/x/crypto/ssh"

	"workspace/db"
)

// ReplicaSchemes are the replica URL schemes serve --replicate takes.
var ReplicaSchemes = []string{"file", "s3", "sftp"}

// replicaClient makes the Litestream client of a replica URL: file:///dir
// (or a plain directory path), s3://bucket/path?endpoint=...&region=...,
// sftp://user@host/path. Credentials come from the URL or the environment
// Litestream reads (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY...).
func replicaClient(raw string) (litestream.ReplicaClient, error) {
	if raw == "" {
		return nil, errors.New("no replica URL given")
	}
	if !strings.Contains(raw, "://") {
		abs, err := filepath.Abs(raw)
		if err != nil {
			return nil, err
		}
		return file.NewReplicaClient(abs), nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("replica URL: %w", err)
	}
	known := false
	for _, s := range ReplicaSchemes {
		known = known || u.Scheme == s
	}
	if !known {
		return nil, fmt.Errorf("replica URL scheme %q: want one of %s", u.Scheme, strings.Join(ReplicaSchemes, ", "))
	}
	if u.Scheme == "s3" && os.Getenv("AWS_CA_BUNDLE") != "" {
		// Litestream's S3 client brings its own HTTP client, to which the
		// AWS SDK cannot add a bundle: it would fail at start, less clearly.
		return nil, errors.New("unset AWS_CA_BUNDLE for an s3:// replica (Litestream cannot use it); give extra CAs through SSL_CERT_FILE or SSL_CERT_DIR instead")
	}
	c, err := litestream.NewReplicaClientFromURL(raw)
	if err != nil {
		return nil, fmt.Errorf("replica URL: %w", err)
	}
	if sc, ok := c.(*lssftp.ReplicaClient); ok {
		// Litestream's URL form reads neither a key file nor the server's
		// host key; its client has both, so the URL's query sets them.
		q := u.Query()
		sc.KeyPath = q.Get("key")
		// Litestream takes PATH relative to the login directory; a path
		// written with two slashes (sftp://user@host//srv/replica) is
		// absolute, which its URL form cannot say.
		if strings.HasPrefix(u.Path, "//") {
			sc.Path = path.Clean(u.Path)
		}
		if hk := q.Get("host_key"); hk != "" {
			if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(hk)); err != nil {
				return nil, fmt.Errorf("replica URL: host_key is not a public key in authorized_keys form: %w", err)
			}
			sc.HostKey = hk
		}
	}
	return c, nil
}

// Replication streams a database's write-ahead log to a replica with
// Litestream (docs/operations.md, "Replication").
type Replication struct {
	store *litestream.Store
	db    *litestream.DB
}

// Start starts streaming the database at path to the replica at
// replicaURL: every second (MonitorInterval) the new WAL frames are shipped
// as LTX files; snapshots are taken daily and older files compacted. Close
// ships what is left; call it after the application's own connections
// have closed (Litestream's rule: SQLite's POSIX locks are per process).
func Start(ctx context.Context, path, replicaURL string, logger *slog.Logger) (*Replication, error) {
	client, err := replicaClient(replicaURL)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	ldb := litestream.NewDB(abs)
	ldb.MonitorInterval = time.Second
	replica := litestream.NewReplicaWithClient(ldb, client)
	ldb.Replica = replica
	if fc, ok := client.(*file.ReplicaClient); ok {
		fc.Replica = replica
	}
	store := litestream.NewStore([]*litestream.DB{ldb}, litestream.CompactionLevels{
		{Level: 0},
		{Level: 1, Interval: 30 * time.Second},
		{Level: 2, Interval: 5 * time.Minute},
		{Level: 3, Interval: time.Hour},
	})
	if logger != nil {
		l := logger.With("component", "replication")
		store.Logger = l
		ldb.SetLogger(l)
	}
	if err := store.Open(ctx); err != nil {
		return nil, fmt.Errorf("replication to %s: %w", RedactURL(replicaURL), err)
	}
	// Litestream starts tracking the database at its first monitor tick (a
	// second in); closed before that, it would ship nothing. Syncing now
	// starts tracking at once and proves the replica takes writes before
	// serve answers anything.
	if err := ldb.SyncAndWait(ctx); err != nil {
		_ = store.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("replication to %s: first sync: %w", RedactURL(replicaURL), err)
	}
	return &Replication{store: store, db: ldb}, nil
}

// Sync ships everything committed so far to the replica and waits for it.
func (r *Replication) Sync(ctx context.Context) error { return r.db.SyncAndWait(ctx) }

// Close ships what is left and stops.
func (r *Replication) Close(ctx context.Context) error { return r.store.Close(ctx) }

// RestoreFromReplica replaces the database at dbPath with the newest state
// of the replica at replicaURL. Like Restore it refuses while a server holds
// the database, checks the result before anything is replaced, and never
// leaves dbPath half-written.
func RestoreFromReplica(ctx context.Context, replicaURL, dbPath string) error {
	client, err := replicaClient(replicaURL)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return err
	}
	// Refuse before downloading anything; Restore takes the lock again.
	unlock, err := db.LockForServe(abs)
	if err != nil {
		return err
	}
	unlock()
	if err := client.Init(ctx); err != nil {
		return fmt.Errorf("replica %s: %w", RedactURL(replicaURL), err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), ".replica-restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "restored.db")
	opt := litestream.NewRestoreOptions()
	opt.OutputPath = out
	opt.IntegrityCheck = litestream.IntegrityCheckFull
	// Litestream logs its restore steps to slog's default logger (stderr).
	if err := litestream.NewReplicaWithClient(nil, client).Restore(ctx, opt); err != nil {
		if errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) {
			return fmt.Errorf("replica %s holds no copy of a database", RedactURL(replicaURL))
		}
		return fmt.Errorf("restore from replica %s: %w", RedactURL(replicaURL), err)
	}
	return db.Restore(ctx, out, abs)
}

// RedactURL hides a password in a replica URL for messages and logs.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
