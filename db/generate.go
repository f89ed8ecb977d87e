package db

// sqlc is pinned in tools/go.mod so generating needs no global install.
//go:generate sh -c "cd .. && go tool -modfile=tools/go.mod sqlc generate"
