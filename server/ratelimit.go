package server

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Guessing limits: every secret a caller can guess (passwords, e-mail and
// phone codes, account deletion tokens, invite codes, and the signing flows'
// TOTP codes) goes through attempt buckets, one per account and one per
// client address. A failed guess spends one attempt from each; an empty
// bucket refuses with 429 and Retry-After until it refills. Only failures
// spend, so a person who types the right password is never slowed by their
// own use, and an attacker can at most slow the account's guessing, not
// block the owner once the window has passed. Limits: docs/security.md.

// limiter is a set of token buckets keyed by string, bounded in memory.
type limiter struct {
	mu      sync.Mutex
	burst   float64       // attempts a fresh bucket holds
	every   time.Duration // one attempt comes back this often
	maxKeys int
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

func newLimiter(burst int, every time.Duration, maxKeys int) *limiter {
	return &limiter{burst: float64(burst), every: every, maxKeys: maxKeys, buckets: map[string]*bucket{}}
}

// refill brings b up to now; a bucket is never above burst.
func (l *limiter) refill(b *bucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens += float64(d) / float64(l.every)
		if b.tokens > l.burst {
			b.tokens = l.burst
		}
		b.at = now
	}
}

// wait is how long key must wait for one attempt; 0 means it may try now.
func (l *limiter) wait(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return 0
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) * float64(l.every))
}

// spend takes one attempt from key's bucket.
func (l *limiter) spend(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			l.evict(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	l.refill(b, now)
	if b.tokens > 0 {
		b.tokens--
	}
}

// evict makes room: first every bucket that has refilled (it holds nothing
// a fresh one would not), then, if an attacker filled the map with live
// buckets, arbitrary ones (map order is random), down to 3/4 of the bound.
func (l *limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		l.refill(b, now)
		if b.tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) <= l.maxKeys*3/4 {
			break
		}
		delete(l.buckets, k)
	}
}

func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// Limits of the attempt buckets (docs/security.md).
const (
	accountAttempts     = 10              // failed guesses an account takes at once
	accountAttemptEvery = time.Minute     // then one more each minute
	addressAttempts     = 50              // failed guesses one client address makes at once
	addressAttemptEvery = 6 * time.Second // then ten a minute
	limiterMaxKeys      = 100_000         // per limiter: about 10 MB at most
)

// attemptLimits holds the two bucket sets.
type attemptLimits struct {
	account *limiter
	address *limiter
}

// newAttemptLimits makes the buckets; 0 takes the default burst. A bucket
// refills its whole burst in the same window whatever its size.
func newAttemptLimits(account, address int) attemptLimits {
	if account <= 0 {
		account = accountAttempts
	}
	if address <= 0 {
		address = addressAttempts
	}
	return attemptLimits{
		account: newLimiter(account, accountAttemptEvery*accountAttempts/time.Duration(account), limiterMaxKeys),
		address: newLimiter(address, addressAttemptEvery*addressAttempts/time.Duration(address), limiterMaxKeys),
	}
}

// guess names one guessing attempt: what is guessed (for the log) and the
// account it is against ("" when there is none, as for registration).
type guess struct {
	kind    string
	account string
}

// guessOf keys an attempt: the account (an e-mail address, compared without
// case, or a user id) and the client's address.
func guessOf(kind, account string) guess {
	return guess{kind: kind, account: strings.ToLower(account)}
}

func userAccount(id int64) string { return "user:" + strconv.FormatInt(id, 10) }

// clientAddress is the peer's IP. Proxies' forwarding headers are not
// trusted: anyone can send them.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// allowGuess refuses with 429 and Retry-After when the account or the
// client address has no attempts left, and logs the refusal.
func (s *Server) allowGuess(rq *request, g guess) error {
	now := s.clock()
	addr := clientAddress(rq.r)
	wait := s.limits.address.wait(addr, now)
	if g.account != "" {
		if w := s.limits.account.wait(g.kind+"|"+g.account, now); w > wait {
			wait = w
		}
	}
	if wait == 0 {
		return nil
	}
	secs := int((wait + time.Second - 1) / time.Second)
	rq.w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.log.WarnContext(rq.ctx, "guessing limited", "kind", g.kind, "client", addr, "retry_after_s", secs, "request_id", requestID(rq.ctx))
	return errorf(http.StatusTooManyRequests, "Too many failed attempts; try again in %d seconds.", secs)
}

// allowSend is allowGuess for requests that make the server send a
// message (reset and confirmation mails): the same buckets, its own words.
func (s *Server) allowSend(rq *request, g guess) error {
	err := s.allowGuess(rq, g)
	if e, ok := err.(*Error); ok {
		e.Message = "Too many messages were asked for; try again in " + rq.w.Header().Get("Retry-After") + " seconds."
	}
	return err
}

// failedGuess spends one attempt of the account and of the client address.
func (s *Server) failedGuess(rq *request, g guess) {
	now := s.clock()
	s.limits.address.spend(clientAddress(rq.r), now)
	if g.account != "" {
		s.limits.account.spend(g.kind+"|"+g.account, now)
	}
}
