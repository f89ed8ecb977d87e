// Command ceiling is the bare server the load benchmark compares the
// service with: httprouter, one prepared primary-key SELECT on modernc
// SQLite (WAL, a reader pool as the service uses) and JSON encoding, with no
// authentication, permissions or logging. What the service answers per
// second as a fraction of this, in the same run on the same machine, is the
// cost of everything the service adds; absolute figures move between
// machines and hours, that ratio does not.
//
//	go run ./server/loadbench/ceiling -addr 127.0.0.1:0 -db /tmp/c.db -rows 10000
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"
	_ "modernc.org/sqlite"
)

type item struct {
	ID             string `json:"id"`
	OrganisationID string `json:"organisation_id"`
	Code           string `json:"code"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	Status         string `json:"status"`
	CreatedAt      string `json:"created_at"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	path := flag.String("db", "ceiling.db", "SQLite file (created and seeded)")
	rows := flag.Int("rows", 10000, "rows to seed, ids 1..rows")
	flag.Parse()
	if err := run(*addr, *path, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

func run(addr, path string, rows int) error {
	ctx := context.Background()
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)"
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	w.SetMaxOpenConns(1)
	if err := seed(ctx, w, rows); err != nil {
		return err
	}
	r, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		return err
	}
	r.SetMaxOpenConns(runtime.GOMAXPROCS(0) * 2)
	r.SetMaxIdleConns(runtime.GOMAXPROCS(0) * 2)
	get, err := r.PrepareContext(ctx, `SELECT id, organisation_id, code, name, description, status, created_at FROM items WHERE id = ?`)
	if err != nil {
		return err
	}
	router := httprouter.New()
	router.GET("/items/:id", func(wr http.ResponseWriter, req *http.Request, ps httprouter.Params) {
		id, err := strconv.ParseInt(ps.ByName("id"), 10, 64)
		if err != nil {
			http.Error(wr, `{"message":"bad id"}`, http.StatusBadRequest)
			return
		}
		var it item
		var rid, org int64
		err = get.QueryRowContext(req.Context(), id).Scan(&rid, &org, &it.Code, &it.Name, &it.Description, &it.Status, &it.CreatedAt)
		if err != nil {
			http.Error(wr, `{"message":"not found"}`, http.StatusNotFound)
			return
		}
		it.ID, it.OrganisationID = strconv.FormatInt(rid, 10), strconv.FormatInt(org, 10)
		b, _ := json.Marshal(it)
		wr.Header().Set("Content-Type", "application/json; charset=utf-8")
		wr.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = wr.Write(b)
	})
	router.GET("/healthz", func(wr http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		wr.Header().Set("Content-Length", "0")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	srv := &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

func seed(ctx context.Context, w *sql.DB, rows int) error {
	if _, err := w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY,
		organisation_id INTEGER NOT NULL, code TEXT NOT NULL, name TEXT NOT NULL,
		description TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL)`); err != nil {
		return err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO items VALUES (?, 1, ?, ?, '', 'open', '2026-11-24T00:00:00.000Z')`)
	if err != nil {
		return err
	}
	for i := 1; i <= rows; i++ {
		if _, err := ins.ExecContext(ctx, i, fmt.Sprintf("P%05d", i), fmt.Sprintf("Project %05d", i)); err != nil {
			return err
		}
	}
	return tx.Commit()
}
