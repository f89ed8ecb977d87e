package server

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Resuming a cut clone (docs/sync.md, "Pairing and the clone"): the clone a
// node was sent is kept at the hub, by node, for an hour or until the node
// has it whole, so the laptop that runs `sync clone` again with the same
// code (the same node: pairing again keeps its number until it is cloned)
// asks for the rest (Range, If-Range with the copy's ETag) instead of the
// whole file. A copy built again is another file: an ETag that no longer
// names the kept copy gets the whole new one.

// cloneKeep is how long a built clone waits for its node to come back.
const cloneKeep = time.Hour

// clonePrefix names the kept copies in the temporary directory (a copy
// left by a process that ended is removed by the next one after cloneKeep).
const clonePrefix = "workspace-clone-"

type keptClone struct {
	path, etag string
	size       int64
	built      time.Time
}

// cloneCache is the hub's kept copies, by node.
type cloneCache struct {
	mu    sync.Mutex
	nodes map[int64]keptClone
}

// get is the node's kept copy when its ETag is etag.
func (c *cloneCache) get(node int64, etag string) (keptClone, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.nodes[node]
	if !ok || k.etag != etag || time.Since(k.built) > cloneKeep {
		return keptClone{}, false
	}
	return k, true
}

// newPath names a file for a copy being built, after removing kept copies
// past their hour (this process's and any another left behind).
func (c *cloneCache) newPath() (path, etag string, err error) {
	c.mu.Lock()
	for node, k := range c.nodes {
		if time.Since(k.built) > cloneKeep {
			os.Remove(k.path)
			delete(c.nodes, node)
		}
	}
	c.mu.Unlock()
	if old, err := filepath.Glob(filepath.Join(os.TempDir(), clonePrefix+"*.db")); err == nil {
		for _, p := range old {
			if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) > cloneKeep {
				os.Remove(p)
			}
		}
	}
	etag = strings.ToLower(rand.Text())
	return filepath.Join(os.TempDir(), fmt.Sprintf("%s%s.db", clonePrefix, etag)), `"` + etag + `"`, nil
}

// keep records the node's new copy (a copy it replaces is removed).
func (c *cloneCache) keep(node int64, k keptClone) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nodes == nil {
		c.nodes = map[int64]keptClone{}
	}
	if old, ok := c.nodes[node]; ok && old.path != k.path {
		os.Remove(old.path)
	}
	c.nodes[node] = k
}

// done removes the node's copy once the node has it whole.
func (c *cloneCache) done(node int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, ok := c.nodes[node]; ok {
		os.Remove(k.path)
		delete(c.nodes, node)
	}
}

// removeAll removes every kept copy (the server is stopping).
func (c *cloneCache) removeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for node, k := range c.nodes {
		os.Remove(k.path)
		delete(c.nodes, node)
	}
}
