package server

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"workspace/db"
)

// The server's own RS256 signing keys, kept in the database so tokens
// survive restarts. The newest key signs; an older key stays published (in
// the JWKS, and accepted when verifying) until every token it can have
// signed has expired. `workspace admin rotate-keys` adds a key; a running
// server switches to it at its next reload (keyReload). docs/auth.md.

const (
	// keyReload is how often a running server rereads the keys, so a
	// rotation made by the CLI takes effect without a restart.
	keyReload = time.Minute
	// keyOverlap is how long a key stays published after its successor was
	// made: the longest token life (access and ID tokens, an hour) plus the
	// reload delay during which it may still have signed, plus leeway.
	keyOverlap = accessTokenTTL + keyReload + time.Minute
)

// signingKey is one RS256 key.
type signingKey struct {
	kid  string
	priv *rsa.PrivateKey
}

// keySet is the keys a server uses at one moment: current signs, published
// verify (current first).
type keySet struct {
	current   *signingKey
	published []*signingKey
}

func (ks *keySet) lookup(kid string) *signingKey {
	for _, k := range ks.published {
		if k.kid == kid {
			return k
		}
	}
	return nil
}

func (a *authenticator) current() *signingKey { return a.keys.Load().current }

// publicKey is the verification key a token of ours names by kid.
func (a *authenticator) publicKey(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	k := a.keys.Load().lookup(kid)
	if k == nil {
		return nil, errors.New("unknown key id")
	}
	return &k.priv.PublicKey, nil
}

// loadKeySet reads every stored key: the newest is current; an older one is
// published while its successor is younger than keyOverlap.
func loadKeySet(ctx context.Context, q *db.Queries, now time.Time) (*keySet, error) {
	rows, err := q.SigningKeyList(ctx)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("no signing key stored")
	}
	ks := &keySet{}
	for i := len(rows) - 1; i >= 0; i-- {
		if i < len(rows)-1 {
			successor, err := db.ParseTime(rows[i+1].CreatedAt)
			if err != nil {
				return nil, err
			}
			if now.Sub(successor) >= keyOverlap {
				break // this key and all older ones have retired
			}
		}
		k, err := parseSigningKey(rows[i])
		if err != nil {
			return nil, err
		}
		ks.published = append(ks.published, k)
	}
	ks.current = ks.published[0]
	return ks, nil
}

func parseSigningKey(row db.SigningKey) (*signingKey, error) {
	block, _ := pem.Decode([]byte(row.PrivateKeyPem))
	if block == nil {
		return nil, errors.New("stored signing key is not PEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	rk, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("stored signing key is not RSA")
	}
	return &signingKey{kid: row.Kid, priv: rk}, nil
}

// addSigningKey makes a new key and stores it; it becomes the current one.
func addSigningKey(ctx context.Context, q *db.Queries, now time.Time) (string, error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", err
	}
	pub, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	sum := sha256.Sum256(pub)
	kid := base64.RawURLEncoding.EncodeToString(sum[:12])
	return kid, q.SigningKeyCreate(ctx, db.SigningKeyCreateParams{
		Kid: kid, PrivateKeyPem: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), CreatedAt: db.FormatTime(now),
	})
}

// loadSigningKeys makes the first key at first start, then loads the set.
func loadSigningKeys(ctx context.Context, store *db.Store, now time.Time) (*keySet, error) {
	var ks *keySet
	err := store.InTx(ctx, func(q *db.Queries) error {
		rows, err := q.SigningKeyList(ctx)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			if _, err := addSigningKey(ctx, q, now); err != nil {
				return err
			}
		}
		ks, err = loadKeySet(ctx, q, now)
		return err
	})
	return ks, err
}

// RotateSigningKey adds a new signing key (workspace admin rotate-keys) and
// returns its kid. Running servers sign with it from their next reload; the
// old key stays published until its tokens have expired.
func RotateSigningKey(ctx context.Context, store *db.Store, now time.Time) (string, error) {
	var kid string
	err := store.InTx(ctx, func(q *db.Queries) error {
		var err error
		kid, err = addSigningKey(ctx, q, now)
		return err
	})
	return kid, err
}

// reloadKeys rereads the keys (a rotation by the CLI, a key retiring).
func (s *Server) reloadKeys(ctx context.Context) error {
	ks, err := loadKeySet(ctx, s.store.R, s.now())
	if err != nil {
		return err
	}
	s.auth.keys.Store(ks)
	return nil
}

// reloadKeysEvery runs reloadKeys on a ticker until ctx ends.
func (s *Server) reloadKeysEvery(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := s.reloadKeys(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("reloading signing keys", "err", err)
			}
		}
	}
}

// jwkSet is the published keys in JWKS form.
func (ks *keySet) jwkSet() []any {
	out := make([]any, 0, len(ks.published))
	for _, k := range ks.published {
		out = append(out, k.jwk())
	}
	return out
}
