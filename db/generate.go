package db

// sqlc is pinned in db/tools/go.mod (its own module, outside ./...) so generating needs no global install.
//go:generate sh -c "cd .. && go tool -modfile=db/tools/go.mod sqlc generate"
