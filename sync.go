package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"workspace/db"
	"workspace/server"
)

// syncCmd: offline site sync on a node (docs/sync.md): clone a hub's
// organisations into a new database, then exchange with it.
func syncCmd(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "sync", Short: "Offline site sync with a hub (head office)"}

	var from, code, name, clonePath string
	clone := &cobra.Command{
		Use:   "clone",
		Short: "Pair with a hub using a pairing code and make a new database of its organisations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || code == "" {
				return errors.New("give --from (the hub's URL) and --code (the pairing code an owner made there)")
			}
			if name == "" {
				name, _ = os.Hostname()
				if name == "" {
					name = "site node"
				}
			}
			node, orgs, err := server.SyncClone(ctx, from, code, name, clonePath, stdout)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s is node %d of %s for %d organisation(s); run workspace sync now --db %s to exchange\n", clonePath, node, from, len(orgs), clonePath)
			return nil
		},
	}
	clone.Flags().StringVar(&from, "from", "", "the hub's URL (its serve address, or the HTTPS address of its proxy)")
	clone.Flags().StringVar(&code, "code", "", "the one-time pairing code an owner made on the hub")
	clone.Flags().StringVar(&name, "name", "", "this node's name as the hub lists it (default: the host name)")
	clone.Flags().StringVar(&clonePath, "db", "./workspace.db", "SQLite database file to make (must not exist)")
	cmd.AddCommand(clone)

	var nowPath string
	now := &cobra.Command{
		Use:   "now",
		Short: "Run one exchange with the hub: send what it lacks, receive what this node lacks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(nowPath); err != nil {
				return fmt.Errorf("--db: %w", err)
			}
			store, err := db.Open(ctx, db.Options{Path: nowPath, NodeID: -1})
			if err != nil {
				return err
			}
			defer store.Close()
			logger := slog.New(slog.NewTextHandler(stderr, nil))
			var progress io.Writer
			if isTerminal(stdout) {
				progress = stdout
			}
			res, err := server.LogSyncExchange(ctx, store, logger, progress)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "sent %d changes, received %d\n", res.Sent, res.Received)
			return nil
		},
	}
	now.Flags().StringVar(&nowPath, "db", "./workspace.db", "SQLite database file of a node made by sync clone")
	cmd.AddCommand(now)
	return cmd
}
