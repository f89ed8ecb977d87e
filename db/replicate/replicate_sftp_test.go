package replicate

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"workspace/db"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// sftpServer is an SSH server with the SFTP subsystem over the local file
// system (github.com/pkg/sftp), for one user with a password.
type sftpServer struct {
	addr    string
	hostKey string // authorized_keys form
	home    string // the login directory: where sessions start
	wg      sync.WaitGroup
}

func startSFTP(t *testing.T, user, password string) *sftpServer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if c.User() == user && string(pw) == password {
				return nil, nil
			}
			return nil, errors.New("wrong user or password")
		},
	}
	cfg.AddHostKey(signer)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sftpServer{addr: l.Addr().String(), hostKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))), home: t.TempDir()}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	s.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			s.wg.Go(func() { serveSSH(c, cfg, s.home) })
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// serveSSH answers one connection: session channels whose "subsystem
// sftp" request starts an SFTP server on the channel.
func serveSSH(c net.Conn, cfg *ssh.ServerConfig, home string) {
	defer c.Close()
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	defer wg.Wait()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		wg.Go(func() {
			defer ch.Close()
			for req := range requests {
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				_ = req.Reply(ok, nil)
				if !ok {
					continue
				}
				srv, err := sftp.NewServer(ch, sftp.WithServerWorkingDirectory(home))
				if err != nil {
					return
				}
				if err := srv.Serve(); err != nil && !errors.Is(err, io.EOF) {
					return
				}
				return
			}
		})
	}
}

// TestReplicateSFTP: an SFTP replica, end to end, against an SSH server
// with the SFTP subsystem started here, its host key pinned with host_key:
// sftp://USER@HOST/PATH is PATH under the login directory (Litestream's
// reading), sftp://USER@HOST//PATH the absolute PATH.
func TestReplicateSFTP(t *testing.T) {
	t.Parallel()
	s := startSFTP(t, "rep", "s3cret")
	abs := filepath.ToSlash(filepath.Join(t.TempDir(), "abs-replica"))
	for _, c := range []struct{ urlPath, onDisk string }{
		{"/site-a/replica", filepath.Join(s.home, "site-a", "replica")},
		{"/" + abs, filepath.FromSlash(abs)},
	} {
		t.Run(c.urlPath, func(t *testing.T) {
			replicateAndRestore(t, "sftp://rep:s3cret@"+s.addr+c.urlPath+"?host_key="+url.QueryEscape(s.hostKey))
			// The replica is what the SFTP server wrote, where the URL says.
			var ltx []string
			_ = filepath.WalkDir(c.onDisk, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".ltx") {
					ltx = append(ltx, p)
				}
				return nil
			})
			if len(ltx) == 0 {
				t.Fatalf("no LTX files under %s", c.onDisk)
			}
		})
	}
}

// TestReplicateSFTPRefused: a wrong password, or a server whose host key
// is not the pinned one, is refused when replication starts, and a
// host_key that is not a key is refused before anything connects.
func TestReplicateSFTPRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startSFTP(t, "rep", "s3cret")
	other := startSFTP(t, "rep", "s3cret")
	dir := filepath.ToSlash(filepath.Join(t.TempDir(), "replica"))
	src := filepath.Join(t.TempDir(), "live.db")
	store, err := db.Open(ctx, db.Options{Path: src, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for name, u := range map[string]string{
		"wrong password": "sftp://rep:wrong@" + s.addr + dir + "?host_key=" + url.QueryEscape(s.hostKey),
		"wrong host key": "sftp://rep:s3cret@" + s.addr + dir + "?host_key=" + url.QueryEscape(other.hostKey),
	} {
		rep, err := Start(ctx, src, u, quiet)
		if err == nil {
			rep.Close(ctx)
			t.Errorf("%s: replication started", name)
		}
	}
	if _, err := replicaClient("sftp://rep@" + s.addr + dir + "?host_key=not-a-key"); err == nil || !strings.Contains(err.Error(), "host_key") {
		t.Errorf("a host_key that is not a key: %v", err)
	}
}
