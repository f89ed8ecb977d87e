// Command workspace serves the organisation workspace API over one SQLite file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"workspace/db"
	"workspace/db/replicate"
	"workspace/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// run is the whole program, callable from tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	root := rootCmd(ctx, getenv, stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// rootCmd is the command tree: every subcommand and flag (the README names
// each one, TestReadmeNamesEveryCommandAndFlag).
func rootCmd(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "workspace",
		Short:         "Multi-tenant organisation workspace service over one SQLite file",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(serveCmd(ctx, getenv, stdout, stderr), migrateCmd(ctx, stdout), backupCmd(ctx, stdout, stderr), restoreCmd(ctx, stdout), auditCmd(ctx, stdout), adminCmd(ctx, getenv, stdout), syncCmd(ctx, stdout, stderr))
	return root
}

func serveCmd(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) *cobra.Command {
	var (
		addr, dbPath, syncMode, smtpURL, issuerURL, publicURL, audience            string
		nodeID, maxBody, maxJSONBody, inFlightBody                                 int64
		maxProjects, maxMembers, accountAttempts, addressAttempts, connsPerAddress int
		registration, allowPrivateEgress                                           bool
		backupDir, metricsAddr, replicateURL                                       string
		backupEvery, syncEvery                                                     time.Duration
		backupKeep                                                                 int
		oidcIssuers, oidcAudiences, oauthClients                                   []string
		smsURL                                                                     string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API (creates and migrates the database on first start)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (rerr error) {
			if len(oidcIssuers) != len(oidcAudiences) {
				return errors.New("give one --oidc-audience for each --oidc-issuer")
			}
			for _, u := range oidcIssuers {
				if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
					return fmt.Errorf("--oidc-issuer %q is not an http(s) URL", u)
				}
			}
			clients, err := parseOAuthClients(oauthClients, getenv)
			if err != nil {
				return err
			}
			if nodeID < -1 || nodeID > 1023 {
				return errors.New("--node-id must be 0-1023")
			}
			if maxBody <= 0 || maxJSONBody <= 0 || inFlightBody <= 0 {
				return errors.New("--max-body, --max-json-body and --max-inflight-body must be positive numbers of bytes")
			}
			if maxProjects < 0 || maxMembers < 0 {
				return errors.New("quotas must be 0 (unlimited) or more")
			}
			if backupDir != "" && backupEvery < time.Minute {
				return errors.New("--backup-every must be at least 1m")
			}
			if syncEvery < 0 || syncEvery > 0 && syncEvery < time.Second {
				return errors.New("--sync-every must be at least 1s (or 0: off)")
			}
			if backupKeep < 0 {
				return errors.New("--backup-keep must be 0 (keep all) or more")
			}
			logs := server.NewLogBuffer(stderr, 100*time.Millisecond)
			defer logs.Close()
			logger := slog.New(logs.Handler(nil))
			unlock, err := db.LockForServe(dbPath)
			if err != nil {
				return err
			}
			defer unlock()
			store, err := db.Open(ctx, db.Options{Path: dbPath, Synchronous: syncMode, NodeID: nodeID})
			if err != nil {
				return err
			}
			var rep *replicate.Replication
			defer func() {
				store.Close()
				// After the store: Litestream ships what is left once the
				// server's own connections are closed. A replica left behind
				// is an error (exit status 1).
				if rep != nil {
					if err := rep.Close(context.Background()); err != nil && rerr == nil {
						rerr = fmt.Errorf("replication: the last writes may not have reached the replica: %w", err)
					}
				}
			}()
			if replicateURL != "" {
				rep, err = replicate.Start(ctx, dbPath, replicateURL, logger)
				if err != nil {
					return fmt.Errorf("--replicate: %w", err)
				}
				fmt.Fprintln(stdout, "replicating to", replicate.RedactURL(replicateURL))
			}
			if backupDir != "" {
				stopBackups := scheduleBackups(ctx, logger, dbPath, backupDir, backupEvery, backupKeep)
				defer stopBackups()
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			defer ln.Close() // Serve closes it too; this covers failures before Serve
			if issuerURL == "" {
				issuerURL = "http://" + ln.Addr().String()
			}
			var ext []server.ExternalIssuer
			for i := range oidcIssuers {
				ext = append(ext, server.ExternalIssuer{URL: oidcIssuers[i], Audience: oidcAudiences[i]})
			}
			if smtpURL == "" {
				smtpURL = getenv("WORKSPACE_SMTP_URL")
			}
			if smsURL == "" {
				smsURL = getenv("WORKSPACE_SMS_URL")
			}
			// The server's background jobs stop (and are waited for) before
			// the store closes.
			srvCtx, stopJobs := context.WithCancel(ctx)
			h, err := server.New(srvCtx, store, server.Config{
				Issuer: issuerURL, Audience: audience, Registration: registration, MaxBody: maxBody,
				WebhookPoll: time.Second, AllowPrivateEgress: allowPrivateEgress, Reminders: true, PruneSyncLog: true,
				MaxJSONBody: maxJSONBody, InFlightBody: inFlightBody,
				MaxProjectsPerOrg: maxProjects, MaxMembersPerOrg: maxMembers, ExternalIssuers: ext,
				SMTPURL: smtpURL, Logger: logger, AccountAttempts: accountAttempts, AddressAttempts: addressAttempts,
				OAuthClients: clients, PublicURL: publicURL, SMSURL: smsURL,
			})
			if err != nil {
				stopJobs()
				return err
			}
			defer func() { stopJobs(); h.Wait() }()
			if syncEvery > 0 {
				if err := store.ReadTx(ctx, func(q *db.Queries) error { _, err := q.SyncHubGet(ctx); return err }); err != nil {
					if db.IsNotFound(err) {
						return errors.New("--sync-every: this database is not a sync node (make one with workspace sync clone)")
					}
					return err
				}
				syncDone := make(chan struct{})
				go func() { defer close(syncDone); server.SyncEvery(srvCtx, store, syncEvery, logger) }()
				defer func() { stopJobs(); <-syncDone }()
			}
			// Bodies get per-request read deadlines (server.bodyDeadline); the
			// write timeout bounds a client that reads answers too slowly.
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, WriteTimeout: 15 * time.Minute}
			// Shutdown waits for requests to finish: event streams must end first.
			srv.RegisterOnShutdown(h.StopStreams)
			errc := make(chan error, 1)
			if metricsAddr != "" {
				mln, err := net.Listen("tcp", metricsAddr)
				if err != nil {
					return fmt.Errorf("--metrics-addr: %w", err)
				}
				mux := http.NewServeMux()
				mux.Handle("GET /metrics", h.Metrics())
				// Profiles for the operator, on this listener only (it is off
				// unless asked for, and never the public one).
				mux.HandleFunc("GET /debug/pprof/", pprof.Index)
				mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
				mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
				msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
				defer msrv.Close()
				go func() {
					if err := msrv.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
						logger.Error("metrics listener", "err", err)
					}
				}()
				fmt.Fprintf(stdout, "metrics on http://%s/metrics\n", mln.Addr())
			}
			go func() { errc <- srv.Serve(server.JSONProtocolErrors(server.LimitConnsPerAddress(ln, connsPerAddress))) }()
			logger.Info("serving", "addr", ln.Addr().String(), "db", dbPath, "issuer", issuerURL)
			fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			// Let in-flight requests finish.
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			logger.Info("shutting down")
			if err := srv.Shutdown(shutdownCtx); err != nil {
				_ = srv.Close() // requests still running after the grace period are cut
				return fmt.Errorf("shutdown: %w", err)
			}
			logger.Info("stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	f.StringVar(&dbPath, "db", "./workspace.db", "SQLite database file (created on first start)")
	f.Int64Var(&nodeID, "node-id", -1, "snowflake node id 0-1023 (default: the one chosen at random and kept in the database)")
	f.StringVar(&syncMode, "synchronous", "FULL", "SQLite synchronous mode: FULL survives power loss; NORMAL is faster and may lose the last commits")
	f.BoolVar(&registration, "registration", true, "allow POST /auth/register")
	f.BoolVar(&allowPrivateEgress, "allow-private-egress", false, "let webhook deliveries reach loopback, private and link-local addresses")
	f.Int64Var(&maxBody, "max-body", 32<<20, "largest upload (multipart) body in bytes")
	f.Int64Var(&maxJSONBody, "max-json-body", 1<<20, "largest body of any other request in bytes")
	f.Int64Var(&inFlightBody, "max-inflight-body", 128<<20, "body bytes all requests in flight may hold at once (503 beyond)")
	f.IntVar(&maxProjects, "max-projects-per-org", 0, "open projects per organisation (0 = unlimited)")
	f.IntVar(&maxMembers, "max-members-per-org", 0, "members per organisation (0 = unlimited)")
	f.IntVar(&connsPerAddress, "max-conns-per-address", 64, "open connections one client address may hold (0 = unlimited)")
	f.IntVar(&accountAttempts, "account-attempts", 10, "failed guesses (passwords, codes) one account may take before 429; refills in 10 minutes")
	f.IntVar(&addressAttempts, "address-attempts", 50, "failed guesses and registrations one client address may make before 429; refills in 5 minutes")
	f.StringArrayVar(&oidcIssuers, "oidc-issuer", nil, "external OpenID issuer URL to trust (repeatable)")
	f.StringArrayVar(&oidcAudiences, "oidc-audience", nil, "audience expected from the matching --oidc-issuer (repeatable)")
	f.StringArrayVar(&oauthClients, "oauth-client", nil, "client of /oauth/authorize as ID=REDIRECT_URI[,REDIRECT_URI...] (repeatable); public unless WORKSPACE_OAUTH_SECRET_<ID> holds its secret")
	f.StringVar(&smtpURL, "smtp-url", "", "send mail through smtp://user:pass@host:port?from=addr (default: log and outbox)")
	f.StringVar(&smsURL, "sms-url", "", "send text messages through twilio://SID:TOKEN@api.twilio.com?from=NUMBER or a signed webhook https://host/path?secret=KEY (default: outbox)")
	f.StringVar(&issuerURL, "issuer-url", "", "public base URL named in tokens (default: http://<addr>)")
	f.StringVar(&publicURL, "public-url", "", "base URL people reach the app at, used for the links in mails (default: the issuer URL)")
	f.StringVar(&audience, "audience", "workspace", "audience of the server's own access tokens")
	f.StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics on a listener of their own (off when empty)")
	f.StringVar(&backupDir, "backup-dir", "", "take online backups into this directory on a schedule (off when empty)")
	f.DurationVar(&backupEvery, "backup-every", time.Hour, "time between scheduled backups (with --backup-dir)")
	f.DurationVar(&syncEvery, "sync-every", 0, "on a node made by sync clone, exchange with its hub this often, e.g. 5m (off when 0)")
	f.IntVar(&backupKeep, "backup-keep", 24, "scheduled backups to keep, oldest deleted first (0 keeps all)")
	f.StringVar(&replicateURL, "replicate", "", "stream the write-ahead log to a replica with Litestream: a directory, file:///DIR, s3://BUCKET/PATH?endpoint=URL&region=R or sftp://USER@HOST/PATH?host_key=KEY (off when empty)")
	return cmd
}

// scheduleBackups takes a backup into dir every interval (the first one
// interval after start) and keeps the newest keep; a failure is logged and
// the next attempt comes at the next tick.
func scheduleBackups(ctx context.Context, logger *slog.Logger, dbPath, dir string, every time.Duration, keep int) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				start := time.Now()
				out, err := db.BackupInto(ctx, dbPath, dir, keep, now)
				if err != nil && ctx.Err() != nil {
					// Stopping the server cut the copy short: not a failure.
					logger.Info("scheduled backup stopped: the server is stopping", "dir", dir)
					return
				}
				if err != nil {
					logger.Error("scheduled backup failed", "dir", dir, "err", err)
					continue
				}
				db.RecordBackup(now)
				logger.Info("scheduled backup written", "file", out, "took_ms", time.Since(start).Milliseconds())
			}
		}
	}()
	return func() { cancel(); <-done }
}

// parseOAuthClients reads --oauth-client values. A secret never goes on the
// command line (ps shows it): it comes from WORKSPACE_OAUTH_SECRET_<ID>, the
// id upper-cased with other characters than letters and digits as '_'.
func parseOAuthClients(vals []string, getenv func(string) string) ([]server.OAuthClient, error) {
	var out []server.OAuthClient
	for _, v := range vals {
		id, uris, ok := strings.Cut(v, "=")
		if !ok || id == server.WebClientID {
			return nil, fmt.Errorf("--oauth-client %q: want ID=REDIRECT_URI[,REDIRECT_URI...] (%s is built in)", v, server.WebClientID)
		}
		env := "WORKSPACE_OAUTH_SECRET_" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' {
				return r - 'a' + 'A'
			}
			if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, id)
		c := server.OAuthClient{ID: id, RedirectURIs: strings.Split(uris, ","), Secret: getenv(env)}
		if err := server.ValidateOAuthClient(c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func migrateCmd(ctx context.Context, stdout io.Writer) *cobra.Command {
	var dbPath string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or bring the database schema up to date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := db.Open(ctx, db.Options{Path: dbPath, NodeID: -1})
			if err != nil {
				return err
			}
			defer store.Close()
			fmt.Fprintln(stdout, "database is up to date:", dbPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "./workspace.db", "SQLite database file")
	return cmd
}

func backupCmd(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	var dbPath, out string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Write a consistent copy of the database, also while serve is running",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			var progress func(written, total int64)
			if isTerminal(stderr) {
				progress = func(written, total int64) {
					fmt.Fprintf(stderr, "\rcopying: %.1f of about %.1f MiB", float64(written)/(1<<20), float64(total)/(1<<20))
				}
			}
			err := db.BackupWithProgress(ctx, dbPath, out, progress)
			if progress != nil {
				fmt.Fprintln(stderr)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, "backup written and checked:", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "./workspace.db", "SQLite database file")
	cmd.Flags().StringVar(&out, "out", "", "file to write the copy to")
	return cmd
}

// isTerminal says whether w is a terminal (a character device), where a
// progress line helps; in logs and pipes it would only be noise.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func restoreCmd(ctx context.Context, stdout io.Writer) *cobra.Command {
	var dbPath, from, fromReplica string
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Replace the database with a checked backup copy or a replica's newest state (refused while serve runs on it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case (from == "") == (fromReplica == ""):
				return errors.New("give one of --from and --from-replica")
			case fromReplica != "":
				if err := replicate.RestoreFromReplica(ctx, fromReplica, dbPath); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "restored %s from the replica %s\n", dbPath, replicate.RedactURL(fromReplica))
				return nil
			}
			if err := db.Restore(ctx, from, dbPath); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "restored %s from %s\n", dbPath, from)
			return nil
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "./workspace.db", "SQLite database file to replace")
	cmd.Flags().StringVar(&from, "from", "", "backup copy to restore (checked before anything is replaced)")
	cmd.Flags().StringVar(&fromReplica, "from-replica", "", "replica URL, as given to serve --replicate, to restore the newest state from (checked before anything is replaced)")
	return cmd
}

func auditCmd(ctx context.Context, stdout io.Writer) *cobra.Command {
	audit := &cobra.Command{Use: "audit", Short: "The audit trail", Args: cobra.NoArgs}
	var dbPath string
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Recompute every audit hash chain and name the first entry altered or removed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(dbPath); err != nil {
				return err
			}
			store, err := db.Open(ctx, db.Options{Path: dbPath, NodeID: -1})
			if err != nil {
				return err
			}
			defer store.Close()
			problems, checked, err := db.VerifyAudit(ctx, store.R)
			if err != nil {
				return err
			}
			if len(problems) > 0 {
				return fmt.Errorf("the audit trail was tampered with:\n  %s", strings.Join(problems, "\n  "))
			}
			fmt.Fprintf(stdout, "%d audit entries checked: every chain is whole\n", checked)
			return nil
		},
	}
	verify.Flags().StringVar(&dbPath, "db", "./workspace.db", "SQLite database file")
	audit.AddCommand(verify)
	return audit
}

func adminCmd(ctx context.Context, getenv func(string) string, stdout io.Writer) *cobra.Command {
	admin := &cobra.Command{Use: "admin", Short: "Administration", Args: cobra.NoArgs}
	var dbPath, email, password string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a Staff user",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if password == "" {
				// Keeps the password out of the process list and shell history.
				password = getenv("WORKSPACE_ADMIN_PASSWORD")
			}
			if email == "" || password == "" {
				return errors.New("--email and --password (or WORKSPACE_ADMIN_PASSWORD) are required")
			}
			if err := server.CheckStaffCredentials(email, password); err != nil {
				return err
			}
			store, err := db.Open(ctx, db.Options{Path: dbPath, NodeID: -1})
			if err != nil {
				return err
			}
			defer store.Close()
			u, err := server.CreateStaff(ctx, store, email, password)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "created staff user %d <%s>\n", u.ID, u.Email)
			return nil
		},
	}
	create.Flags().StringVar(&dbPath, "db", "./workspace.db", "SQLite database file")
	create.Flags().StringVar(&email, "email", "", "e-mail address (sign-in name)")
	create.Flags().StringVar(&password, "password", "", "password, 8-72 bytes (default: $WORKSPACE_ADMIN_PASSWORD)")
	admin.AddCommand(create)
	var rotateDB string
	rotate := &cobra.Command{
		Use:   "rotate-keys",
		Short: "Add a new token signing key; running servers switch to it within a minute",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := db.Open(ctx, db.Options{Path: rotateDB, NodeID: -1})
			if err != nil {
				return err
			}
			defer store.Close()
			kid, err := server.RotateSigningKey(ctx, store, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "new signing key %s: servers sign with it from their next key reload (within a minute); the old key stays in the JWKS until its tokens have expired\n", kid)
			return nil
		},
	}
	rotate.Flags().StringVar(&rotateDB, "db", "./workspace.db", "SQLite database file")
	admin.AddCommand(rotate)
	return admin
}
